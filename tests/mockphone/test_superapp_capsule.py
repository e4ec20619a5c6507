"""SuperApp mini-programs as in WeChat / Alipay: opened from a chat and from search, capsule at the top right."""

import pytest

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone.phone import MockPhone
from tests.mockphone.helpers import elements, find, tap


@pytest.fixture
def superapp():
    phone = MockPhone(seed=0)
    phone.act(Action("open_app", app="superapp"))
    return phone


def _capsule(phone):
    return [e for e in elements(phone) if e.resource_id in ("com.phoneloop.superapp:id/capsule_more",
                                                            "com.phoneloop.superapp:id/capsule_close")]


def _screen(phone):
    return phone.activity(), [p.name for p in phone.nav.stacks["com.phoneloop.superapp"]]


def test_a_mini_program_shared_in_a_chat_opens_with_the_capsule_and_close_returns_to_the_chat(superapp):
    tap(superapp, rid="chat", text=None)
    chat = _screen(superapp)
    assert chat == (".ChattingUI", ["main", "chat"]) and not _capsule(superapp)
    tap(superapp, rid="mini_card")
    assert superapp.activity() == ".AppBrandUI"
    more, close = _capsule(superapp)
    d = superapp.display
    assert (more.content_desc, close.content_desc) == ("More", "Close") and more.clickable and close.clickable
    assert more.bounds[2] <= close.bounds[0] and close.bounds[2] <= d.width and close.bounds[3] <= d.status_h + d.dp(56)
    tap(superapp, rid="city_shanghai")
    tap(superapp, rid="search_hotels")  # deeper into the mini-program: the capsule stays
    assert len(_capsule(superapp)) == 2
    tap(superapp, rid="capsule_close")
    assert _screen(superapp) == chat


def test_a_mini_program_found_by_search_closes_back_to_the_search_results(superapp):
    box = find(superapp, rid="search")
    superapp.act(Action("input_text", text="food", x=box.center[0], y=box.center[1]))
    results = [e for e in elements(superapp) if e.resource_id.endswith("/search_result")]
    assert len(results) == 1
    tap(superapp, rid="search_result")
    assert superapp.activity() == ".AppBrandUI" and len(_capsule(superapp)) == 2
    tap(superapp, rid="restaurant_row")
    tap(superapp, rid="capsule_close")
    assert _screen(superapp) == (".LauncherUI", ["main"])
    assert find(superapp, rid="search").text == "food" and find(superapp, rid="search_result")


def test_search_with_no_match_says_so(superapp):
    box = find(superapp, rid="search")
    superapp.act(Action("input_text", text="zzz", x=box.center[0], y=box.center[1]))
    assert find(superapp, rid="no_results")


def test_the_capsule_menu_is_a_small_dialog_that_leaves_the_mini_program_open(superapp):
    tap(superapp, rid="mini_hotels")
    tap(superapp, rid="capsule_more")
    dump = parse_ui_tree(superapp.ui_tree())
    assert any(e.resource_id.endswith("capsule_menu") for e in dump)
    assert {"SHARE", "ADD TO MY MINI PROGRAMS", "CANCEL"} <= {e.text.upper() for e in dump}
    tap(superapp, text="SHARE")
    assert superapp.nav.dialog is None and superapp.nav.toast_text == "Shared Hotels"
    assert superapp.activity() == ".AppBrandUI" and len(_capsule(superapp)) == 2


def test_the_super_app_s_own_pages_have_no_capsule(superapp):
    assert not _capsule(superapp)
    assert not any(e.resource_id.endswith("capsule_more") for e in elements(superapp))
