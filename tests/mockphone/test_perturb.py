"""Seeded perturbations: they happen, they are deterministic, and oracles get through them."""

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
    allowed = {"datalake.types", "datalake.uitree", "datalake.errors"}
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
