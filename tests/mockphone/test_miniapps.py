"""The SuperApp's ride, movie, express and utility mini-programs, and the seed article's two case families:
opened from the list, the recent row, a chat card and search, with the capsule; seeded data; validation; zh-CN;
the budget-never-applied and stale-clipboard endings scoring 0."""

import pytest

from datalake.uitree import parse_ui_tree
from mockphone import MockPhone, i18n, world
from mockphone.apps.catalog_zh import STRINGS
from mockphone.apps.superapp import CHATS, MINI
from mockphone.tasks import invariants, statediff
from mockphone.tasks.endings import play
from mockphone.tasks.registry import REGISTRY

NEW = ("ride", "movie", "express", "utility")
PREFIX = {"ride": "MiniRide", "movie": "Movie", "express": "Express", "utility": "Utility"}
FILTERS = {"FilterHotelBudget": ("budget-never-applied", "stopped-on-the-unfiltered-results", "a-stricter-budget",
                                 "a-looser-budget"),
           "FilterMovieTicketPrice": ("price-filter-never-applied", "a-stricter-price", "a-looser-price"),
           "FilterMovieRating": ("rating-filter-never-applied", "a-looser-rating"),
           "FilterRideFare": ("fare-filter-never-applied", "comfort-without-the-filter", "a-stricter-fare",
                              "a-looser-fare")}
CLIPBOARD = ("CrossMapsAddressToMiniRide", "CrossParcelNumberToMessage", "CrossTicketCodeToNote",
             "CrossUtilityAccountToMessage")


def _rids(phone):
    return [el.resource_id.rsplit("/", 1)[-1] for el in parse_ui_tree(phone.ui_tree())]


def _texts(phone):
    return [el.text for el in parse_ui_tree(phone.ui_tree()) if el.text]


def _stack(phone):
    return [p.name for p in phone.nav.stacks["com.phoneloop.superapp"]]


def _run(phone, script):
    play(phone, script, terminate=False)


@pytest.mark.parametrize("mini", NEW)
def test_each_new_mini_program_opens_from_its_chat_card_with_the_capsule_and_closes_back_to_the_chat(mini):
    phone = MockPhone(seed=0)
    chat = next(name for name, (_, m, _) in CHATS.items() if m == mini)

    def script(ui):
        yield from ui.open("superapp")
        yield from ui.tap(text=chat)
        yield from ui.tap(rid="mini_card")
    _run(phone, script)
    assert _stack(phone) == ["main", "chat", MINI[mini][1]] and phone.activity() == ".AppBrandUI"
    assert {"capsule_more", "capsule_close"} <= set(_rids(phone))
    _run(phone, lambda ui: ui.tap(rid="capsule_close"))
    assert _stack(phone) == ["main", "chat"]


@pytest.mark.parametrize("mini", NEW)
def test_each_new_mini_program_is_found_by_search_and_then_listed_as_recently_used(mini):
    phone = MockPhone(seed=0)

    def script(ui):
        yield from ui.open("superapp")
        yield from ui.type_into("search", MINI[mini][0].split()[0])
        yield from ui.tap(rid="search_result")
    _run(phone, script)
    assert _stack(phone)[-1] == MINI[mini][1]
    _run(phone, lambda ui: ui.tap(rid="capsule_close"))
    assert _stack(phone) == ["main"]

    def clear_and_reopen(ui):
        yield from ui.type_into("search", "")
        yield from ui.tap(rid="recent_mini")
    _run(phone, clear_and_reopen)
    assert _stack(phone)[-1] == MINI[mini][1]


def test_the_mini_programs_data_is_the_seed_s_world():
    a, b = MockPhone(seed=4), MockPhone(seed=4)
    assert a.state("superapp").minis == b.state("superapp").minis
    assert a.state("superapp").minis != MockPhone(seed=5).state("superapp").minis
    for name in ("movies", "movie_tickets", "parcels"):
        assert world.canonical(world.World(7).section(name)) == world.canonical(world.World(7).section(name))
        assert i18n.has_cjk(world.canonical(world.World(7, "zh-CN").section(name)))
    films = world.generate(2).movies
    assert len({f.rating for f in films}) == len(films)
    assert all(len({s.price for s in f.showings}) == len(f.showings) for f in films)


@pytest.mark.parametrize("mini,steps,dialog", [
    ("ride", lambda ui: [ui.tap(rid="ride_fares")], "no_destination"),
    ("express", lambda ui: [ui.type_into("tracking", "ZZ000"), ui.tap(rid="track")], "not_found"),
    ("express", lambda ui: [ui.tap(rid="send_parcel"), ui.type_into("recipient", "Ann"),
                            ui.type_into("phone", "12"), ui.type_into("address", "1 Main Street"),
                            ui.tap(rid="book_pickup")], "invalid_shipment"),
    ("utility", lambda ui: [ui.tap(text="Gas"), ui.tap(rid="top_up"), ui.type_into("amount", "5"),
                            ui.tap(rid="pay_topup")], "invalid_amount"),
])
def test_mini_program_forms_refuse_invalid_input_with_a_dialog_and_change_nothing(mini, steps, dialog):
    from mockphone.tasks.miniapp_tasks import open_mini

    phone = MockPhone(seed=2)
    before = statediff.snapshot(phone)

    def script(ui):
        yield from open_mini(ui, mini)
        for step in steps(ui):
            yield from step
    _run(phone, script)
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == dialog
    assert not statediff.meaningful(before, statediff.snapshot(phone))


@pytest.mark.parametrize("task,dialog", [("MiniRideRequest", "confirm_ride"), ("MovieBuyTickets", "confirm_tickets"),
                                         ("ExpressConfirmReceipt", "confirm_receipt_dialog"),
                                         ("UtilityPayBill", "confirm_pay")])
def test_paying_and_confirming_wait_for_the_dialog(task, dialog):
    phone, t = invariants.start(REGISTRY[task], 0)
    probe, probe_task = invariants.start(REGISTRY[task], 0)
    for a in invariants.run_oracle(probe, probe_task, terminate=False)[:-1]:
        phone.act(a)
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == dialog
    assert t.is_successful(phone) == 0.0


def test_a_filter_is_navigation_and_changes_no_state():
    from mockphone.tasks.filter_tasks import slide_filter
    from mockphone.tasks.miniapp_tasks import open_mini

    phone = MockPhone(seed=0)
    before = statediff.snapshot(phone)
    _run(phone, lambda ui: (yield from open_mini(ui, "movie")) or (yield from slide_filter(ui, 50, 100)))
    assert phone.app("superapp").nav.ticket_max == 50
    assert not statediff.meaningful(before, statediff.snapshot(phone))


@pytest.mark.parametrize("mini", NEW)
def test_each_new_mini_program_has_four_mini_app_templates_or_more(mini):
    own = [n for n, c in REGISTRY.items() if n.startswith(PREFIX[mini]) and c.category == "mini-app"]
    assert len(own) >= 4, own


def test_each_case_family_has_four_templates_with_zh_instructions():
    from mockphone.tasks.instructions import ZH

    assert len(FILTERS) >= 4 and len(CLIPBOARD) >= 4
    for name in (*FILTERS, *CLIPBOARD):
        assert name in REGISTRY and name in ZH
    assert all(REGISTRY[n].category == "cross-app" for n in CLIPBOARD)


@pytest.mark.parametrize("mini", NEW)
def test_zh_mini_program_home_shows_chinese_and_no_english_catalog_label(mini):
    from mockphone.tasks.miniapp_tasks import open_mini

    phone = MockPhone(seed=0, locale="zh-CN")
    _run(phone, lambda ui: open_mini(ui, mini))
    texts = _texts(phone)
    assert i18n.has_cjk(texts[0]), texts[:4]
    assert not [t for t in texts if t in STRINGS], texts


@pytest.mark.parametrize("name", sorted(FILTERS))
@pytest.mark.parametrize("seed", [0, 1])
def test_a_budget_never_applied_or_set_to_another_bound_scores_zero(name, seed):
    for ending in FILTERS[name]:
        phone, t = invariants.start(REGISTRY[name], seed)
        t.wrong_endings()[ending](phone, t)
        assert t.is_successful(phone) == 0.0, ending


@pytest.mark.parametrize("name", CLIPBOARD)
@pytest.mark.parametrize("seed", [0, 1])
def test_pasting_the_stale_clipboard_scores_zero(name, seed):
    phone, t = invariants.start(REGISTRY[name], seed)
    stale = phone.system.clipboard
    t.wrong_endings()["pasted-the-stale-clipboard"](phone, t)
    assert stale and t.is_successful(phone) == 0.0


def test_a_ride_keeps_the_fare_filter_it_was_found_under_when_the_filter_changes_later():
    from mockphone.tasks.filter_tasks import slide_filter

    phone, t = invariants.start(REGISTRY["FilterRideFare"], 0)
    invariants.run_oracle(phone, t, terminate=False)
    _run(phone, lambda ui: slide_filter(ui, 300, 300))  # the fares page is still open after the request
    assert phone.app("superapp").nav.ride_max == 300
    assert phone.state("superapp").minis.rides[0].fare_filter == t.params["budget"]
    assert t.is_successful(phone) == 1.0
