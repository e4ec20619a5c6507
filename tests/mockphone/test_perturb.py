"""Seeded perturbations: they happen, they are deterministic, and oracles get through them."""

import re

import pytest

from datalake.types import Action
from mockphone.perturb import Perturbations
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY
from tests.mockphone.helpers import elements, find, tap

ROUGH = Perturbations(permission_rate=1.0, ad_rate=0.3, slow_rate=0.3, network_error_rate=0.2, notification_rate=0.3)


def test_permission_dialog_on_first_launch_is_modal_and_recorded():
    phone = MockPhone(perturbations=Perturbations(permission_rate=1.0))
    phone.act(Action("open_app", app="bank"))
    assert find(phone, text="ALLOW")
    phone.act(Action("key", key="back"))  # not cancelable
    assert phone.nav.dialog is not None
    tap(phone, text="DON'T ALLOW")
    assert phone.system_state().permissions == {"com.phoneloop.bank": False}
    phone.act(Action("key", key="home"))
    phone.act(Action("open_app", app="bank"))
    assert phone.nav.dialog is None  # asked once per app


def test_slow_load_shows_spinner_until_the_clock_moves():
    phone = MockPhone(perturbations=Perturbations(slow_rate=1.0, slow_seconds=3))
    phone.act(Action("open_app", app="notes"))
    assert any(e.class_name == "android.widget.ProgressBar" for e in elements(phone))
    phone.act(Action("wait", seconds=3))
    assert find(phone, rid="new_note")


def test_network_error_page_recovers_with_retry():
    phone = MockPhone(perturbations=Perturbations(network_error_rate=1.0))
    phone.act(Action("open_app", app="shop"))
    assert find(phone, text="No internet connection")
    tap(phone, rid="retry")
    assert find(phone, rid="search")


def test_ad_popup_must_be_closed():
    phone = MockPhone(perturbations=Perturbations(ad_rate=1.0))
    phone.act(Action("open_app", app="clock"))
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == "ad_popup"
    tap(phone, text="CLOSE")
    assert phone.nav.dialog is None


def test_perturbations_are_seeded():
    def frames(seed):
        phone = MockPhone(seed=seed, perturbations=Perturbations.realistic())
        out = []
        for app in ("shop", "bank", "notes", "mail", "files", "clock"):
            phone.act(Action("open_app", app=app))
            out.append(phone.ui_tree())
        return out

    assert frames(1) == frames(1)
    assert len({tuple(frames(s)) for s in range(4)}) > 1


def test_rates_are_validated():
    with pytest.raises(ValueError, match="ad_rate"):
        Perturbations(ad_rate=1.5)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_oracle_gets_through_perturbations(name):
    phone = MockPhone(seed=7, perturbations=ROUGH)
    task = REGISTRY[name](seed=7)
    task.initialize_task(phone)
    solve(phone, task)
    assert task.is_successful(phone) == 1.0


def test_mockphone_imports_only_the_shared_types_from_datalake():
    import pathlib
    import re

    root = pathlib.Path(__import__("mockphone").__file__).parent
    allowed = {"datalake.types", "datalake.uitree", "datalake.errors",
               "datalake.stats"}  # the one Wilson interval of every report (boundary rates)
    for path in root.rglob("*.py"):
        for module in re.findall(r"^\s*(?:from|import) (datalake[\w.]*)", path.read_text(), re.M):
            assert module in allowed, f"{path.name} imports {module}"


def test_incoming_message_banner_covers_the_top_and_can_be_opened_or_dismissed():
    phone = MockPhone(perturbations=Perturbations(notification_rate=1.0))
    phone.act(Action("open_app", app="settings"))
    banner = find(phone, rid="heads_up")
    assert banner.bounds[1] < find(phone, rid="toolbar").bounds[3]  # it hides the app bar
    assert phone.system_state().notifications
    x, y = banner.center
    phone.act(Action("swipe", x=x, y=y, x2=x, y2=0))
    assert all(not e.resource_id.endswith("heads_up") for e in elements(phone))
    tap(phone, text="Display")
    tap(phone, rid="heads_up")
    assert phone.nav.foreground == "com.google.android.apps.messaging"
    assert phone.activity() == ".ThreadActivity"


def test_banner_expires_on_its_own():
    phone = MockPhone(perturbations=Perturbations(notification_rate=1.0))
    phone.act(Action("open_app", app="clock"))
    phone.act(Action("wait", seconds=6))
    assert all(not e.resource_id.endswith("heads_up") for e in elements(phone))


# --- profiles and the real-app gaps ---------------------------------------------------------

from mockphone.errors import BadPerturbationProfile  # noqa: E402
from mockphone.perturb import PROFILES, load_profile  # noqa: E402


def test_profiles_are_ordered_from_none_to_heavy():
    assert list(PROFILES) == ["none", "light", "real-like", "heavy"]
    assert not any(PROFILES["none"].rates().values())
    for kind in PROFILES["none"].rates():
        assert PROFILES["light"].rates()[kind] <= PROFILES["real-like"].rates()[kind] <= PROFILES["heavy"].rates()[kind]


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(BadPerturbationProfile, match="none, light, real-like, heavy"):
        load_profile("stormy")


def test_yaml_profile_overrides_a_base(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("base: light\npermission: 0.9\ncheckout_error: 1\nslow_seconds: 5\n")
    p = load_profile(str(path))
    assert (p.permission_rate, p.checkout_error_rate, p.slow_seconds, p.ad_rate) == (0.9, 1.0, 5, PROFILES["light"].ad_rate)
    assert p.meta(3) == {"profile": str(path), "seed": 3, "rates": p.rates()}


@pytest.mark.parametrize("text, message", [
    ("ad: 0.1\npermision: 0.5\n", "line 2: unknown perturbation kind 'permision'"),
    ("ad: 0.1\n\nslow: 1.5\n", "line 3: rate of 'slow' must be a number in [0, 1], got 1.5"),
    ("login: -0.1\n", "line 1: rate of 'login' must be"),
    ("ad: yes\n", "line 1: rate of 'ad'"),
    ("base: medium\n", "line 1: unknown base profile 'medium'"),
    ("- ad\n", "line 1: expected a mapping"),
])
def test_yaml_profile_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(BadPerturbationProfile, match=re.escape(message)):
        load_profile(str(path))


def test_sign_in_prompt_in_account_apps_only():
    phone = MockPhone(perturbations=Perturbations(login_rate=1.0))
    phone.act(Action("open_app", app="clock"))
    assert phone.nav.dialog is None
    phone.act(Action("open_app", app="shop"))
    assert phone.nav.dialog.rid == "login_prompt"
    tap(phone, text="NOT NOW")
    assert phone.nav.dialog is None and find(phone, rid="search")


def test_runtime_permission_at_the_first_launch_of_the_episode():
    phone = MockPhone(perturbations=Perturbations(runtime_permission_rate=1.0))
    phone.act(Action("open_app", app="notes"))
    assert phone.nav.dialog.rid == "runtime_perm"
    labels = [e.text for e in elements(phone) if e.class_name == "android.widget.Button"]
    assert labels == ["DON'T ALLOW", "ONLY THIS TIME", "WHILE USING THE APP"]  # stacked: all on screen
    assert all(0 <= e.bounds[0] and e.bounds[2] <= 1080 for e in elements(phone))
    tap(phone, text="WHILE USING THE APP")
    assert phone.system_state().permissions == {"com.phoneloop.notes:location": True}
    phone.act(Action("key", key="home"))
    phone.act(Action("open_app", app="notes"))
    assert phone.nav.dialog is None  # once per app and episode


def test_rate_this_app_once_per_app_and_episode():
    phone = MockPhone(perturbations=Perturbations(rate_app_rate=1.0))
    for launch in (1, 2):
        phone.act(Action("open_app", app="files"))
        assert (phone.nav.dialog is not None) == (launch == 1)
        if phone.nav.dialog is not None:
            assert phone.nav.dialog.rid == "rate_dialog"
            tap(phone, text="NO THANKS")
        phone.act(Action("key", key="home"))
    phone.reset(0)  # a new episode asks again
    phone.act(Action("open_app", app="files"))
    assert phone.nav.dialog.rid == "rate_dialog"


def test_dialogs_of_one_launch_queue_and_show_one_after_another():
    phone = MockPhone(perturbations=Perturbations(permission_rate=1.0, runtime_permission_rate=1.0, login_rate=1.0,
                                                  rate_app_rate=1.0, ad_rate=1.0))
    phone.act(Action("open_app", app="shop"))
    seen = []
    while phone.nav.dialog is not None:
        seen.append(phone.nav.dialog.rid)
        phone.nav.press_dialog_button(0)
    assert seen == ["perm_dialog", "runtime_perm", "login_prompt", "rate_dialog", "ad_popup"]
    assert phone.perturber.shown == {"permission": 1, "runtime_permission": 1, "login": 1, "rate_app": 1, "ad": 1}
    assert find(phone, rid="search")


def test_a_detour_into_another_app_does_not_shift_the_draws_of_the_next():
    def dialogs(first_apps):
        phone = MockPhone(seed=11, perturbations="heavy")
        for app in first_apps:
            phone.act(Action("open_app", app=app))
        phone.act(Action("open_app", app="shop"))
        p = phone.perturber
        page = phone.nav.top_page("com.phoneloop.shop")
        return [d.rid for d in (phone.nav.dialog, *p.queue)], id(page) in p.loading, id(page) in p.failed

    assert dialogs(["notes"]) == dialogs(["clock", "files"])


def test_page_draws_must_share_one_draw_within_one():
    with pytest.raises(ValueError, match="must sum to at most 1"):
        Perturbations(slow_rate=0.5, network_error_rate=0.3, ad_rate=0.3)


def test_network_error_in_the_middle_of_checkout_and_the_oracle_retries():
    phone = MockPhone(seed=1, perturbations=Perturbations(checkout_error_rate=1.0))
    task = REGISTRY["ShopBuyItem"](seed=1)
    task.initialize_task(phone)
    actions = solve(phone, task)
    retries = [a for a in actions if a.element is not None and (a.element.resource_id or "").endswith("/retry")]
    assert len(retries) == 1  # the checkout page failed once; other pages loaded normally
    assert task.is_successful(phone) == 1.0
    assert len(phone.state("shop").orders) == 1  # retrying did not order twice


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_oracle_gets_through_the_heavy_profile(name):
    phone = MockPhone(seed=3, perturbations="heavy")
    task = REGISTRY[name](seed=3)
    task.initialize_task(phone)
    solve(phone, task)
    assert task.is_successful(phone) == 1.0
