"""Screenshot and uiautomator dump come from one tree: real-device attributes, bounds that match the pixels."""

import io
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone.phone import MockPhone
from tests.mockphone.helpers import find, tap

ATTRS = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
         "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds"]
APPS = MockPhone().app_names()


def image(obs):
    return Image.open(io.BytesIO(obs.screenshot)).convert("RGB")


def test_every_node_carries_the_real_device_attributes_in_order(phone):
    root = ET.fromstring(phone.ui_tree())
    assert root.tag == "hierarchy" and root.attrib == {"rotation": "0"}
    for node in root.iter("node"):
        assert list(node.attrib) == ATTRS


def test_xml_escapes_markup_and_drops_control_characters(phone):
    phone.act(Action("open_app", app="notes"))
    tap(phone, rid="new_note")
    phone.act(Action("input_text", text='<b>"Tom & Jerry"</b>\x01', x=540, y=find(phone, rid="title").center[1]))
    assert find(phone, rid="title").text == '<b>"Tom & Jerry"</b>'


@pytest.mark.parametrize("app", APPS)
def test_text_elements_are_drawn_inside_their_bounds(app):
    phone = MockPhone(seed=2)
    phone.act(Action("open_app", app=app))
    obs = phone.observe()
    img = image(obs)
    checked = 0
    for el in parse_ui_tree(obs.ui_tree):
        x1, y1, x2, y2 = el.bounds
        if el.text and el.class_name in ("android.widget.TextView", "android.widget.Button") and y2 - y1 > 20:
            colors = img.crop(el.bounds).getcolors(maxcolors=1 << 16)
            assert colors is None or len(colors) > 1, f"{app}: {el.text!r} at {el.bounds} is blank"
            checked += 1
    assert checked >= 2


def test_filled_button_pixels_match_its_bounds(phone):
    phone.act(Action("open_app", app="shop"))
    tap(phone, rid="product_row")
    obs = phone.observe()
    img = image(obs)
    x1, y1, x2, y2 = find(phone, rid="add_to_cart").bounds
    cy = (y1 + y2) // 2
    accent = (0xC5, 0x22, 0x1F)
    assert img.getpixel((x1 + 30, cy)) == accent
    assert img.getpixel((x2 - 30, cy)) == accent
    assert img.getpixel((x1 - 4, cy)) != accent
    assert img.getpixel((x2 + 4, cy)) != accent


def test_switch_pixels_follow_checked_state(phone):
    phone.act(Action("open_app", app="settings"))
    tap(phone, text="Network & internet")
    switch = next(e for e in parse_ui_tree(phone.ui_tree()) if e.class_name == "android.widget.Switch")
    assert switch.checked  # Wi-Fi starts on
    x1, y1, x2, y2 = switch.bounds
    assert image(phone.observe()).getpixel((x1 + 8, (y1 + y2) // 2)) == (0x1A, 0x73, 0xE8)


def test_nav_bar_buttons_hit_where_they_are_dumped(phone):
    phone.act(Action("open_app", app="clock"))
    home = find(phone, desc="Home")
    phone.act(Action("tap", x=home.bounds[0] + 1, y=home.bounds[1] + 1))
    assert phone.nav.foreground is None


def test_partly_scrolled_rows_have_clipped_bounds_inside_the_list(phone):
    phone.act(Action("open_app", app="contacts"))
    phone.act(Action("swipe", x=540, y=1800, x2=540, y2=1650))
    els = parse_ui_tree(phone.ui_tree())
    lst = next(e for e in els if e.resource_id.endswith(":id/list"))
    for e in els:
        if e.parent == lst.index:
            assert lst.bounds[1] <= e.bounds[1] and e.bounds[3] <= lst.bounds[3]


def test_edit_text_reports_password_and_focus(phone):
    phone.act(Action("open_app", app="contacts"))
    tap(phone, rid="search")
    el = find(phone, rid="search")
    assert (el.class_name, el.focused, el.clickable, el.password) == ("android.widget.EditText", True, True, False)


def _windows(phone):
    return list(ET.fromstring(phone.ui_tree()))


@pytest.mark.parametrize("setup", ["launcher", "app", "keyboard", "dialog", "shade", "heads_up"])
def test_the_dump_has_one_root_per_window_as_a_real_device_gives(setup):
    from mockphone.perturb import Perturbations

    phone = MockPhone(seed=0, perturbations=Perturbations(notification_rate=1.0) if setup == "heads_up" else None)
    if setup in ("app", "keyboard", "heads_up"):
        phone.act(Action("open_app", app="notes" if setup != "heads_up" else "contacts"))
    if setup == "keyboard":
        tap(phone, rid="new_note")
        tap(phone, rid="title")
    if setup == "dialog":
        phone.act(Action("open_app", app="contacts"))
        phone.nav.show_dialog(__import__("mockphone.widgets", fromlist=["Dialog"]).Dialog("Delete?", rid="confirm"))
        phone.invalidate()
    if setup == "shade":
        phone.act(Action("swipe", x=540, y=5, x2=540, y2=1400))
    app, status, nav = _windows(phone)
    d = phone.display
    assert status.get("package") == nav.get("package") == "com.android.systemui"
    assert status.get("bounds").startswith("[0,0][1080,")
    assert nav.get("bounds") == f"[0,{d.height - d.nav_h}][1080,2400]"
    assert [n.get("resource-id") for n in status][0] == "com.android.systemui:id/status_bar"
    assert [n.get("resource-id") for n in nav] == ["com.android.systemui:id/navigation_bar_frame"]
    assert app.get("package") == (phone.nav.foreground or "com.google.android.apps.nexuslauncher")
    assert not any(n.get("package") == "com.android.systemui" and n.get("resource-id", "").endswith(
        ("status_bar", "navigation_bar_frame", "heads_up")) for n in app.iter("node"))
    if setup == "heads_up":
        assert any(n.get("resource-id") == "com.android.systemui:id/heads_up" for n in status)
    if setup == "keyboard":
        assert not any("inputmethod" in n.get("package") for n in app.iter("node"))  # the IME's window is not dumped


def test_every_element_is_still_found_in_the_windowed_dump(phone):
    """What parse_ui_tree consumers (curation marks, the recorder, oracles) read: all nodes, nav buttons last."""
    els = parse_ui_tree(phone.ui_tree())
    tree = [n for n in phone.root.walk() if not n.data.get("hidden") and n is not phone.root]
    assert len(els) == len(tree) + 3  # + the three window roots
    assert [e.resource_id for e in els if e.parent is None] == ["", "", ""]
    assert [e.content_desc for e in els][-3:] == ["Back", "Home", "Overview"]
