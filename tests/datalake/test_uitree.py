import pytest

from datalake.errors import UITreeError
from datalake.uitree import element_at, parse_bounds, parse_ui_tree

DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings"
        content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false"
        focused="false" scrollable="false" long-clickable="false" password="false" selected="false"
        bounds="[0,0][1080,2400]">
    <node index="0" text="Wi-Fi" resource-id="android:id/title" class="android.widget.TextView"
          package="com.android.settings" content-desc="" checkable="false" checked="false" clickable="false"
          enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false"
          password="false" selected="false" bounds="[42,300][400,380]" />
    <node index="1" text="" resource-id="android:id/switch_widget" class="android.widget.Switch"
          package="com.android.settings" content-desc="Wi-Fi" checkable="true" checked="true" clickable="true"
          enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true"
          password="false" selected="false" bounds="[900,300][1040,380]" />
  </node>
</hierarchy>"""


def test_parses_every_node_in_document_order():
    elements = parse_ui_tree(DUMP)
    assert [e.class_name for e in elements] == [
        "android.widget.FrameLayout", "android.widget.TextView", "android.widget.Switch"]
    title, switch = elements[1], elements[2]
    assert (title.index, title.child_index, title.depth, title.parent) == (1, 0, 1, 0)
    assert title.text == "Wi-Fi" and title.resource_id == "android:id/title"
    assert switch.bounds == (900, 300, 1040, 380) and switch.center == (970, 340)
    assert switch.checkable and switch.checked and switch.clickable and switch.long_clickable
    assert switch.content_desc == "Wi-Fi" and not switch.password


def test_element_at_returns_the_deepest_hit():
    elements = parse_ui_tree(DUMP)
    assert element_at(elements, 950, 350).class_name == "android.widget.Switch"
    assert element_at(elements, 5, 5).class_name == "android.widget.FrameLayout"
    assert element_at(elements, 5000, 5) is None


def test_target_from_element_keeps_identity_and_bounds():
    target = parse_ui_tree(DUMP)[2].as_target()
    assert target.index == 2 and target.resource_id == "android:id/switch_widget"
    assert target.bounds == (900, 300, 1040, 380) and target.text is None


@pytest.mark.parametrize("xml, message", [
    ("<hierarchy><node", "not well-formed"),
    ("<html/>", "root must be <hierarchy>"),
    ('<!DOCTYPE x [<!ENTITY a "b">]><hierarchy/>', "DOCTYPE"),
    ('<hierarchy><node bounds="[0,0]"/></hierarchy>', "bad bounds"),
    ('<hierarchy><node index="x" bounds="[0,0][1,1]"/></hierarchy>', "is not an integer"),
])
def test_malformed_trees_raise_a_clear_error(xml, message):
    with pytest.raises(UITreeError, match=message):
        parse_ui_tree(xml)


def test_parse_bounds_allows_negative_offscreen_coordinates():
    assert parse_bounds("[-10,0][1090,200]") == (-10, 0, 1090, 200)
