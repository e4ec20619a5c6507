import pytest

from api.overlay import describe, shapes


def kinds(action, w=1080, h=2400):
    return [s["kind"] for s in shapes(action, w, h)]


@pytest.mark.parametrize("action, expected", [
    ({"type": "tap", "x": 10, "y": 20}, ["dot"]),
    ({"type": "double_tap", "x": 10, "y": 20}, ["dot", "ring"]),
    ({"type": "long_press", "x": 10, "y": 20, "duration_ms": 800}, ["ring", "dot"]),
    ({"type": "swipe", "x": 10, "y": 900, "x2": 10, "y2": 100}, ["arrow"]),
    ({"type": "scroll", "direction": "down"}, ["arrow", "label"]),
    ({"type": "input_text", "text": "hi"}, ["label"]),
    ({"type": "key", "key": "home"}, ["label"]),
    ({"type": "open_app", "app": "Clock"}, ["label"]),
    ({"type": "terminate", "status": "infeasible"}, ["label"]),
    ({"type": "tap", "x": 5, "y": 5, "element": {"bounds": [0, 0, 50, 40]}}, ["box", "dot"]),
])
def test_each_action_kind_has_its_shapes(action, expected):
    assert kinds(action) == expected


def test_swipe_arrow_follows_the_finger():
    (arrow,) = shapes({"type": "swipe", "x": 10, "y": 900, "x2": 30, "y2": 100}, 1080, 2400)
    assert (arrow["x1"], arrow["y1"], arrow["x2"], arrow["y2"]) == (10, 900, 30, 100)


def test_scroll_down_points_down_from_the_centre():
    arrow = shapes({"type": "scroll", "direction": "down"}, 1000, 2000)[0]
    assert (arrow["x1"], arrow["y1"]) == (500, 1000) and arrow["y2"] > arrow["y1"] and arrow["x2"] == 500


def test_sizes_scale_with_the_screenshot():
    small = shapes({"type": "tap", "x": 1, "y": 1}, 108, 240)[0]["r"]
    large = shapes({"type": "tap", "x": 1, "y": 1}, 1080, 2400)[0]["r"]
    assert large == pytest.approx(10 * small)


def test_labels_stay_on_screen():
    label = shapes({"type": "input_text", "text": "x" * 50, "x": 0, "y": 2399}, 1080, 2400)[-1]
    assert 0 < label["x"] < 1080 and 0 < label["y"] < 2400


def test_element_box_uses_bounds_as_x_y_width_height():
    box = shapes({"type": "tap", "x": 20, "y": 30, "element": {"bounds": [10, 20, 60, 50]}}, 108, 240)[0]
    assert box == {"kind": "box", "x": 10, "y": 20, "w": 50, "h": 30}


def test_describe_names_the_fields_and_the_target():
    text = describe({"type": "tap", "x": 180, "y": 137, "element": {"text": "Wi-Fi"}})
    assert text == "tap x=180 y=137 on “Wi-Fi”"
    assert describe(None) == "—"
