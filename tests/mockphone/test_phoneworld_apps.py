"""The Maps, Rides, To-do, Weather, Music and News apps: structure, seeded data, validation, dialogs, empty states,
both locales, and the information-transfer endings that must score 0."""

import re

import pytest

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone import MockPhone, i18n, world
from mockphone.apps.catalog_zh import FORMATS, STRINGS
from mockphone.tasks import invariants, statediff
from mockphone.tasks.endings import play
from mockphone.tasks.instances import domain_of
from mockphone.tasks.registry import REGISTRY

APPS = ("maps", "rides", "todo", "weather", "music", "news")
SECTIONS = ("places", "saved_places", "rides", "todo", "weather", "weather_saved", "music", "music_library", "news")


def _texts(phone):
    return [el.text for el in parse_ui_tree(phone.ui_tree()) if el.text]


def _rids(phone):
    return {el.resource_id.rsplit("/", 1)[-1] for el in parse_ui_tree(phone.ui_tree())}


def _run(phone, *steps):
    """Play oracle-style steps (generators over the UI) on ``phone`` without terminating."""
    def script(ui):
        for step in steps:
            yield from step(ui)
    play(phone, script, terminate=False)


@pytest.mark.parametrize("app", APPS)
def test_each_new_app_has_tabs_its_own_domain_and_at_least_eight_single_app_templates(app):
    phone = MockPhone(seed=1)
    phone.act(Action("open_app", app=app))
    assert sum(r.startswith("tab_") for r in _rids(phone)) == 3
    own = [n for n, c in REGISTRY.items() if c.app_names == (app,)]
    assert len(own) >= 8, own
    assert domain_of(app) != "other"


@pytest.mark.parametrize("name", SECTIONS)
def test_world_sections_are_pure_functions_of_seed_and_locale(name):
    a, b = world.World(5).section(name), world.World(5).section(name)
    assert world.canonical(a) == world.canonical(b)
    assert world.canonical(world.World(6).section(name)) != world.canonical(a)
    zh = world.canonical(world.World(5, "zh-CN").section(name))
    if name not in ("saved_places", "weather_saved", "music_library"):  # these hold names drawn from the others
        assert i18n.has_cjk(zh)


def test_places_make_nearest_and_best_rated_one_place_per_category():
    places = world.generate(3).places
    for category in {p.category for p in places}:
        mine = [p for p in places if p.category == category]
        assert len({p.km for p in mine}) == len(mine) and len({p.rating for p in mine}) == len(mine)


@pytest.mark.parametrize("app,steps,dialog", [
    ("maps", lambda ui: [ui.tap(rid="tab_settings"), ui.tap(rid="label_home"), ui.type_into("address", "abc"),
                         ui.tap(rid="save")], "invalid_address"),
    ("rides", lambda ui: [ui.tap(rid="tab_account"), ui.tap(rid="promo_codes"), ui.type_into("code", "abc"),
                          ui.tap(rid="apply")], "invalid_code"),
    ("rides", lambda ui: [ui.tap(rid="tab_account"), ui.tap(rid="promo_codes"), ui.type_into("code", "ZZZZ00"),
                          ui.tap(rid="apply")], "unknown_code"),
    ("rides", lambda ui: [ui.tap(rid="see_prices")], "no_destination"),
    ("rides", lambda ui: [ui.type_into("destination", "12 Main Street"), ui.tap(rid="see_prices"),
                          ui.tap(rid="schedule"), ui.type_into("time", "25:99"), ui.tap(rid="save_schedule")],
     "invalid_time"),
    ("todo", lambda ui: [ui.tap(rid="new_task"), ui.type_into("title", "Buy stamps"), ui.type_into("due", "3/4"),
                         ui.tap(rid="save")], "invalid_task"),
    ("weather", lambda ui: [ui.tap(rid="tab_settings"), ui.tap(rid="threshold"), ui.type_into("percent", "150"),
                            ui.tap(rid="save")], "invalid_threshold"),
    ("music", lambda ui: [ui.tap(rid="tab_library"), ui.tap(rid="new_playlist"), ui.tap(rid="create")],
     "invalid_name"),
    ("news", lambda ui: [ui.tap(rid="settings"), ui.tap(rid="digest_time"), ui.type_into("time", "7.30"),
                         ui.tap(rid="save")], "invalid_time"),
])
def test_forms_refuse_invalid_input_with_a_dialog_and_change_nothing(app, steps, dialog):
    phone = MockPhone(seed=2)
    before = statediff.snapshot(phone)

    def script(ui):
        yield from ui.open(app)
        for step in steps(ui):  # generators: each runs on the screen the previous one left
            yield from step
    play(phone, script, terminate=False)
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == dialog
    assert not statediff.meaningful(before, statediff.snapshot(phone))


@pytest.mark.parametrize("task,dialog", [("MapsUnsavePlace", "confirm_remove"), ("RidesCancelScheduled",
                                                                                   "confirm_unschedule"),
                                         ("TodoDelete", "confirm_delete"), ("WeatherRemoveCity", "confirm_remove"),
                                         ("MusicDeletePlaylist", "confirm_delete"), ("NewsHideOutlet", "confirm_hide")])
def test_destructive_actions_wait_for_a_confirmation(task, dialog):
    """The oracle without its last tap (the dialog's button) leaves a confirmation open and nothing changed."""
    phone, t = invariants.start(REGISTRY[task], 0)
    probe, probe_task = invariants.start(REGISTRY[task], 0)
    actions = invariants.run_oracle(probe, probe_task, terminate=False)
    for a in actions[:-1]:
        phone.act(a)
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == dialog
    assert t.is_successful(phone) == 0.0


def test_empty_states_show_when_lists_are_empty():
    phone = MockPhone(seed=0)
    phone.app("maps").state.saved = []
    phone.app("weather").state.saved = ()
    phone.app("music").state.playlists = []
    phone.app("news").state.saved = ()
    phone.app("rides").state.scheduled = []
    for app, tab in (("maps", "tab_saved"), ("weather", "tab_cities"), ("music", "tab_library"),
                     ("news", "tab_saved"), ("rides", "tab_activity")):
        _run(phone, lambda ui, app=app, tab=tab: ui.open(app), lambda ui, tab=tab: ui.tap(rid=tab))
        assert "empty" in _rids(phone), app


def test_a_search_is_navigation_and_changes_no_state():
    phone = MockPhone(seed=0)
    before = statediff.snapshot(phone)
    _run(phone, lambda ui: ui.open("maps"), lambda ui: ui.tap(rid="cat_cafe"), lambda ui: ui.tap(rid="sort"),
         lambda ui: ui.tap(rid="sort_distance"))
    assert "summary" in _rids(phone)
    assert not statediff.meaningful(before, statediff.snapshot(phone))


@pytest.mark.parametrize("app", APPS)
def test_zh_screens_show_no_english_label_of_the_catalog(app):
    phone = MockPhone(seed=0, locale="zh-CN")
    phone.act(Action("open_app", app=app))
    tabs = sorted(r for r in _rids(phone) if r.startswith("tab_"))
    for tab in tabs:
        _run(phone, lambda ui, tab=tab: ui.tap(rid=tab))
        texts = _texts(phone)
        assert any(i18n.has_cjk(t) for t in texts), (app, tab, texts[:6])
        assert not [t for t in texts if t in STRINGS], (app, tab)


def test_composed_strings_keep_their_placeholders():
    for key, value in FORMATS.items():
        assert set(re.findall(r"\{(\w+)\}", key)) == set(re.findall(r"\{(\w+)\}", value)), key


@pytest.mark.parametrize("task,stale", [("CrossMapsAddressToRide", "pasted-the-stale-clipboard"),
                                        ("CrossMapsRideFareToMessage", "pasted-the-stale-clipboard"),
                                        ("CrossEventPlaceToScheduledRide", "pasted-the-stale-clipboard"),
                                        ("CrossNewsHeadlineToNote", "pasted-the-stale-clipboard"),
                                        ("CrossMessagePromoToRides", "applied-the-old-code")])
@pytest.mark.parametrize("seed", [0, 1])
def test_carrying_the_stale_value_instead_of_the_fresh_one_scores_zero(task, stale, seed):
    phone, t = invariants.start(REGISTRY[task], seed)
    t.wrong_endings()[stale](phone, t)
    assert t.is_successful(phone) == 0.0


def test_long_horizon_templates_need_fifteen_steps_or_more():
    from mockphone.tasks.catalog import oracle_steps

    for name in ("CrossMapsRideFareToMessage", "CrossEventPlaceToScheduledRide", "CrossNearestPlaceErrand",
                 "MusicMixtape"):
        assert min(len(oracle_steps(REGISTRY[name], s)) for s in range(3)) >= 15, name
