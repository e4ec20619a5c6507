"""The phone itself: observations, determinism, navigation, keyboard, clipboard, shade, dialogs, scrolling."""

import pytest

from datalake.types import Action, Observation
from datalake.uitree import parse_ui_tree
from mockphone.errors import PhoneClosed, UnknownApp
from mockphone.layout import Display
from mockphone.phone import MockPhone
from tests.mockphone.helpers import elements, find, long_press, tap


def test_observe_returns_png_of_screen_size_and_parsable_tree(phone):
    obs = phone.observe()
    assert isinstance(obs, Observation)
    assert obs.size == (1080, 2400)
    assert obs.package == "com.google.android.apps.nexuslauncher"
    els = parse_ui_tree(obs.ui_tree)
    assert els[0].bounds == (0, 0, 1080, 2400)
    assert {e.content_desc for e in els} >= {"Back", "Home", "Overview", "Settings", "Shop"}


def test_display_is_configurable():
    small = MockPhone(display=Display(720, 1600, 320))
    obs = small.observe()
    assert obs.size == (720, 1600)
    assert max(e.bounds[3] for e in parse_ui_tree(obs.ui_tree)) == 1600
    assert small.act(Action("shell", command="wm density")).output == "Physical density: 320"


def test_same_seed_and_actions_give_identical_bytes():
    def run(seed):
        p = MockPhone(seed=seed)
        frames = []
        for a in (Action("open_app", app="contacts"), Action("tap", x=540, y=700), Action("scroll", direction="down"),
                  Action("key", key="back"), Action("open_app", app="shop")):
            p.act(a)
            obs = p.observe()
            frames.append((obs.screenshot, obs.ui_tree))
        return frames

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_reset_is_exact(phone):
    first = phone.observe()
    phone.act(Action("open_app", app="notes"))
    phone.act(Action("shell", command="settings put global wifi_on 0"))
    phone.system.clipboard = "leftover"
    phone.reset(0)
    again = phone.observe()
    assert (again.screenshot, again.ui_tree) == (first.screenshot, first.ui_tree)
    assert phone.system_state().clipboard == ""


def test_launcher_icon_opens_app_and_back_returns_home(phone):
    tap(phone, desc="Settings")
    assert phone.observe().package == "com.android.settings"
    tap(phone, text="Display")
    assert phone.activity() == ".DisplayActivity"
    phone.act(Action("key", key="back"))
    assert phone.activity() == ".MainActivity"
    tap(phone, desc="Back")
    assert phone.nav.foreground is None


def test_each_app_keeps_its_own_back_stack(phone):
    phone.act(Action("open_app", app="settings"))
    tap(phone, text="Display")
    phone.act(Action("open_app", app="Notes"))
    tap(phone, rid="new_note")
    phone.act(Action("open_app", app="com.android.settings"))
    assert phone.activity() == ".DisplayActivity"
    phone.act(Action("open_app", app="notes"))
    assert phone.activity() == ".EditorActivity"


def test_home_key_and_app_switcher(phone):
    phone.act(Action("open_app", app="settings"))
    phone.act(Action("open_app", app="clock"))
    phone.act(Action("key", key="app_switch"))
    assert phone.nav.overlay == "recents"
    tap(phone, text="Settings")
    assert phone.nav.foreground == "com.android.settings"
    phone.act(Action("key", key="home"))
    assert phone.nav.foreground is None


def test_open_app_unknown_name_fails_softly(phone):
    result = phone.act(Action("open_app", app="Snapchat"))
    assert not result.ok and "no app named" in result.detail
    with pytest.raises(UnknownApp):
        phone.app("Snapchat")


def test_tap_on_edit_focuses_it_and_shows_keyboard(phone):
    phone.act(Action("open_app", app="contacts"))
    body_before = find(phone, rid="list").bounds
    tap(phone, rid="search")
    assert find(phone, rid="search").focused
    assert find(phone, rid="list").bounds[3] < body_before[3]  # the keyboard takes the bottom of the screen
    phone.act(Action("input_text", text="Ali"))
    assert find(phone, rid="search").text == "Ali"
    phone.act(Action("key", key="back"))  # first back hides the keyboard
    assert phone.nav.focus is None and phone.nav.foreground == "com.android.contacts"


def test_input_text_without_focus_does_nothing(phone):
    phone.act(Action("open_app", app="contacts"))
    result = phone.act(Action("input_text", text="hello"))
    assert not result.ok
    assert find(phone, rid="search").text == "Search contacts"  # the hint, as real dumps show it


def test_input_text_clear_replaces_and_default_appends(phone):
    phone.act(Action("open_app", app="contacts"))
    x, y = find(phone, rid="search").center
    phone.act(Action("input_text", text="Ma", x=x, y=y))
    phone.act(Action("input_text", text="ya"))
    assert find(phone, rid="search").text == "Maya"
    phone.act(Action("input_text", text="Li", clear=True))
    assert find(phone, rid="search").text == "Li"


def test_onscreen_keyboard_keys_type(phone):
    phone.act(Action("open_app", app="contacts"))
    tap(phone, rid="search")
    d = phone.display
    kb_top = d.height - d.nav_h - d.keyboard_h
    row_h = d.keyboard_h / 4
    phone.act(Action("tap", x=d.width * 0.05, y=kb_top + row_h / 2))  # "q"
    phone.act(Action("tap", x=d.width * 0.95, y=kb_top + row_h * 2.5))  # backspace
    phone.act(Action("tap", x=d.width * 0.15, y=kb_top + row_h / 2))  # "w"
    assert find(phone, rid="search").text == "w"


def test_enter_submits_focused_field(phone):
    phone.act(Action("open_app", app="shop"))
    tap(phone, rid="search")
    phone.act(Action("input_text", text="yoga"))
    phone.act(Action("key", key="enter"))
    assert phone.activity() == ".ResultsActivity"
    assert find(phone, text="Yoga Mat")


def test_long_press_text_copies_and_long_press_input_pastes(phone):
    phone.act(Action("open_app", app="shop"))
    tap(phone, rid="product_row")
    long_press(phone, rid="product_name")
    name = find(phone, rid="product_name").text
    assert phone.system_state().clipboard == name
    assert find(phone, text="Copied to clipboard")  # the toast
    phone.act(Action("open_app", app="notes"))
    tap(phone, rid="new_note")
    long_press(phone, rid="body")
    assert find(phone, rid="body").text == name


def test_paste_with_empty_clipboard_reports_it(phone):
    phone.act(Action("open_app", app="notes"))
    tap(phone, rid="new_note")
    result = long_press(phone, rid="body")
    assert not result.ok and "clipboard is empty" in result.detail


def test_toast_disappears_after_a_few_seconds(phone):
    phone.nav.toast("Hello")
    phone.invalidate()
    assert find(phone, text="Hello")
    phone.act(Action("wait", seconds=5))
    assert all(e.text != "Hello" for e in elements(phone))


def test_wait_advances_simulated_clock(phone):
    assert find(phone, rid="clock").text == "9:00"
    phone.act(Action("wait", seconds=125))
    assert find(phone, rid="clock").text == "9:02"


def test_swipe_down_from_status_bar_opens_shade_with_quick_toggles(phone):
    phone.nav.notify("com.google.android.apps.messaging", "Mia Chen", "Are you free?", "main")
    phone.act(Action("swipe", x=540, y=20, x2=540, y2=1400))
    assert phone.nav.overlay == "shade" and phone.observe().package == "com.android.systemui"
    assert find(phone, text="Mia Chen")
    tap(phone, text="Bluetooth")
    assert phone.system_state().flag("global/bluetooth_on")
    tap(phone, text="Mia Chen")
    assert phone.nav.overlay is None and phone.nav.foreground == "com.google.android.apps.messaging"
    assert phone.system_state().notifications == []


def test_back_closes_shade_first(phone):
    phone.act(Action("open_app", app="clock"))
    phone.act(Action("shell", command="cmd statusbar expand-notifications"))
    phone.act(Action("key", key="back"))
    assert phone.nav.overlay is None and phone.nav.foreground == "com.google.android.deskclock"


def test_dialog_blocks_the_app_and_buttons_run_callbacks(phone):
    phone.act(Action("open_app", app="notes"))
    first = next(e for e in elements(phone) if e.resource_id == "android:id/title")
    long_press(phone, text=first.text)
    assert phone.nav.dialog is not None
    assert all(not e.resource_id.endswith("note_row") for e in elements(phone))  # app window not in the dump
    tap(phone, text="CANCEL")
    assert phone.nav.dialog is None and len(phone.state("notes").notes) == 5
    long_press(phone, text=first.text)
    tap(phone, text="DELETE")
    assert [n.title for n in phone.state("notes").notes].count(first.text) == 0


def test_tap_outside_cancelable_dialog_dismisses_it(phone):
    phone.act(Action("open_app", app="notes"))
    long_press(phone, rid="note_row")
    phone.act(Action("tap", x=540, y=200))
    assert phone.nav.dialog is None


def test_scroll_reveals_content_beyond_the_screen(phone):
    phone.act(Action("open_app", app="contacts"))
    before = [e.text for e in elements(phone) if e.resource_id == "android:id/title"]
    assert find(phone, rid="list").scrollable
    assert phone.act(Action("scroll", direction="down")).ok
    after = [e.text for e in elements(phone) if e.resource_id == "android:id/title"]
    assert after[-1] not in before
    phone.act(Action("scroll", direction="up"))
    assert [e.text for e in elements(phone) if e.resource_id == "android:id/title"] == before


def test_swipe_up_on_list_scrolls_like_scroll_down(phone):
    phone.act(Action("open_app", app="contacts"))
    phone.act(Action("swipe", x=540, y=1800, x2=540, y2=800))
    assert phone.nav.top_page("com.android.contacts").scroll > 0


def test_scroll_left_or_without_scrollable_fails_softly(phone):
    assert not phone.act(Action("scroll", direction="left")).ok
    phone.act(Action("open_app", app="settings"))
    assert not phone.act(Action("scroll", direction="down")).ok


def test_edge_swipe_is_back_and_bottom_swipe_up_is_home(phone):
    phone.act(Action("open_app", app="settings"))
    tap(phone, text="Display")
    phone.act(Action("swipe", x=2, y=1200, x2=500, y2=1200))
    assert phone.activity() == ".MainActivity"
    phone.act(Action("swipe", x=540, y=2390, x2=540, y2=1500))
    assert phone.nav.foreground is None


def test_double_tap_taps_twice(phone):
    phone.act(Action("open_app", app="settings"))
    tap(phone, text="Network & internet")
    x, y = find(phone, rid="wifi").center
    phone.act(Action("double_tap", x=x, y=y))
    assert phone.system_state().flag("global/wifi_on")  # toggled off and on again


def test_slider_tap_sets_value_by_position(phone):
    phone.act(Action("open_app", app="settings"))
    tap(phone, text="Display")
    x1, y1, x2, y2 = find(phone, rid="brightness").bounds
    phone.act(Action("tap", x=x2 - 1, y=(y1 + y2) // 2))
    assert phone.system_state().setting("system/screen_brightness") == "255"


def test_answer_ask_user_terminate_are_recorded(phone):
    phone.act(Action("answer", text="42"))
    phone.act(Action("ask_user", text="Which account?"))
    phone.act(Action("terminate", status="infeasible"))
    s = phone.system_state()
    assert (s.answers, s.questions, s.terminated) == (["42"], ["Which account?"], "infeasible")


def test_tool_calls_registered_function_and_unknown_is_an_error_result(phone):
    phone.register_tool("weather", lambda p, args: f"sunny in {args['city']}")
    assert phone.act(Action("tool", name="weather", args={"city": "Oslo"})).output == "sunny in Oslo"
    result = phone.act(Action("tool", name="calendar_lookup"))
    assert not result.ok and "calendar_lookup" in result.output and "weather" in result.output


def test_state_reads_are_copies(phone):
    phone.state("notes").notes.clear()
    assert len(phone.state("notes").notes) == 5


def test_closed_phone_refuses_to_act(phone):
    phone.close()
    with pytest.raises(PhoneClosed):
        phone.observe()
    phone.reset(1)
    assert phone.observe().size == (1080, 2400)


def test_dark_theme_changes_pixels_not_tree(phone):
    phone.act(Action("open_app", app="settings"))
    light = phone.observe()
    phone.act(Action("shell", command="settings put secure ui_night_mode 2"))
    phone.act(Action("wait", seconds=0))
    dark = phone.observe()
    assert light.screenshot != dark.screenshot
    assert light.ui_tree == dark.ui_tree


def test_fonts_fall_back_to_pillow_default(monkeypatch):
    from mockphone import fonts

    fonts._font.cache_clear()
    monkeypatch.setattr(fonts.os.path, "exists", lambda path: False)
    try:
        f = fonts.font(40)
        assert f.getlength("Hello") > 40  # a scalable TrueType font, not the tiny bitmap one
    finally:
        fonts._font.cache_clear()


def test_device_describes_the_mock_screen(phone):
    assert phone.device().to_dict() == {"width": 1080, "height": 2400, "kind": "mock", "dpi": 420, "seed": 0}


def test_frames_are_identical_across_processes_with_different_hash_seeds():
    import os
    import subprocess
    import sys

    script = ("import hashlib; from datalake.types import Action; from mockphone.phone import MockPhone; "
              "from mockphone.perturb import Perturbations; "
              "p = MockPhone(seed=5, perturbations=Perturbations.realistic()); "
              "[p.act(Action('open_app', app=a)) for a in ('shop', 'bank', 'superapp')]; o = p.observe(); "
              "print(hashlib.sha256(o.screenshot + o.ui_tree.encode()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2)}
    assert len(outs) == 1


def test_package_docstring_example_runs():
    import textwrap

    import mockphone

    doc = mockphone.__doc__
    block = doc.split("\n\n")[1]
    exec(compile(textwrap.dedent(block), "mockphone-docstring", "exec"), {})


def test_short_long_press_is_a_tap_and_tiny_swipe_is_a_tap(phone):
    x, y = find(phone, desc="Settings").center
    phone.act(Action("long_press", x=x, y=y, duration_ms=100))
    assert phone.nav.foreground == "com.android.settings"
    phone.act(Action("key", key="home"))
    x, y = find(phone, desc="Clock").center
    phone.act(Action("swipe", x=x, y=y, x2=x + 5, y2=y + 3))
    assert phone.nav.foreground == "com.google.android.deskclock"


def test_held_tiny_swipe_is_a_long_press(phone):
    phone.act(Action("open_app", app="notes"))
    x, y = find(phone, rid="note_row").center
    phone.act(Action("swipe", x=x, y=y, x2=x, y2=y, duration_ms=800))
    assert phone.nav.dialog is not None and phone.nav.dialog.rid == "confirm_delete"


@pytest.mark.parametrize("name", ["email", "Mail", "com.phoneloop.mail", "mail"])
def test_open_app_accepts_short_name_label_package_and_alias(phone, name):
    assert phone.act(Action("open_app", app=name)).ok
    assert phone.nav.foreground == "com.phoneloop.mail"


@pytest.mark.parametrize("kwargs", [{"width": 0}, {"dpi": -1}, {"height": 100}, {"width": 1080.5}])
def test_display_rejects_nonsense_sizes(kwargs):
    with pytest.raises(ValueError, match="Display"):
        Display(**{"width": 1080, "height": 2400, "dpi": 420, **kwargs})


def test_navigate_up_leaves_the_page_even_with_the_keyboard_open(phone):
    phone.act(Action("open_app", app="notes"))
    tap(phone, rid="new_note")
    tap(phone, rid="title")
    tap(phone, desc="Navigate up")
    assert phone.activity() == ".MainActivity" and phone.nav.focus is None
