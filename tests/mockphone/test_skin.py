"""Skins: the realish phone looks and lays out differently from the stock one, and the same tasks still solve."""

import io

import numpy as np
import pytest
from PIL import Image

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone import reallike
from mockphone.layout import Display
from mockphone.phone import MockPhone
from mockphone.skin import REALISH, STOCK, get
from mockphone.tasks import registry
from mockphone.tasks.oracle import solve


def _pixels(phone: MockPhone) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(phone.screenshot())).convert("RGB")).astype(np.int16)


@pytest.mark.parametrize("app", [None, "Settings", "Messages", "Contacts"])
def test_the_realish_skin_renders_differently_from_stock(app):
    stock, real = MockPhone(seed=3), MockPhone(seed=3, skin="realish")
    if app:
        for p in (stock, real):
            p.act(Action("open_app", app=app))
    a, b = _pixels(stock), _pixels(real)
    assert a.shape == (2400, 1080, 3) and b.shape == (2340, 1080, 3)
    h = min(a.shape[0], b.shape[0])
    differ = (np.abs(a[:h] - b[:h]).sum(axis=2) > 12).mean()
    assert differ > 0.5  # most pixels: another background, bars, type and offsets


def test_the_realish_skin_shifts_the_structure_too():
    stock, real = MockPhone(seed=3), MockPhone(seed=3, skin="realish")
    for p in (stock, real):
        p.act(Action("open_app", app="Settings"))
    s, r = parse_ui_tree(stock.ui_tree()), parse_ui_tree(real.ui_tree())
    assert [e.resource_id for e in s if "recent_apps" in e.resource_id]  # stock: three-button navigation
    assert not [e.resource_id for e in r if "recent_apps" in e.resource_id]  # realish: a gesture bar
    assert any(e.resource_id.endswith("home_handle") for e in r)
    title = lambda els: next(e for e in els if e.text == "Network & internet").bounds  # noqa: E731
    assert title(s) != title(r)  # other offsets, density and app bar


def test_a_stock_phone_draws_the_same_bytes_before_and_after_a_realish_one():
    before = MockPhone(seed=5).screenshot()
    MockPhone(seed=5, skin="realish").screenshot()  # another font family through the shared caches
    assert MockPhone(seed=5).screenshot() == before


def test_unknown_skins_and_bad_metrics_are_refused():
    with pytest.raises(ValueError, match="unknown skin"):
        get("glossy")
    with pytest.raises(ValueError, match="nav_dp"):
        Display(nav_dp=-1)
    assert get(None) is STOCK and get("realish") is REALISH


SAMPLE = ("SettingsWifiOff", "SettingsDarkThemeOn", "ContactsAdd", "ContactsLookupNumber", "MessagesSend",
          "NotesCreate", "ClockAddAlarm", "CalendarCreateEvent", "MailSend", "FilesRename",
          "InfeasibleDeleteMissingNote", "QuickSettingsAirplaneMode")


@pytest.mark.parametrize("name", SAMPLE)
def test_the_oracle_still_solves_the_task_on_a_real_like_phone(name):
    cls = registry.get(name)
    for seed in (0, 1):
        phone = reallike.phone(seed)  # realish skin and real-like perturbations
        task = cls(seed=seed)
        task.initialize_task(phone)
        solve(phone, task)
        assert task.is_successful(phone) == 1.0, (name, seed, task.violations(phone)[:3])
