import json

import pytest

from datalake.errors import InvalidAction, InvalidRecord
from datalake.types import ACTION_TYPES, Action, Device, Episode, Observation, Step, Target
from tests.factory import H, W, episode, png

EXAMPLES = {
    "tap": {"type": "tap", "x": 10, "y": 20, "element": {"index": 3, "resource_id": "a:id/ok", "text": "OK",
                                                         "class_name": "android.widget.Button",
                                                         "bounds": [0, 0, 50, 40]}},
    "double_tap": {"type": "double_tap", "x": 1.5, "y": 2.25},
    "long_press": {"type": "long_press", "x": 10, "y": 20, "duration_ms": 800},
    "swipe": {"type": "swipe", "x": 10, "y": 200, "x2": 10, "y2": 20, "duration_ms": 300},
    "scroll": {"type": "scroll", "direction": "down", "x": 50, "y": 100},
    "input_text": {"type": "input_text", "text": "héllo \"world\" 你好", "clear": True},
    "key": {"type": "key", "key": "app_switch"},
    "open_app": {"type": "open_app", "app": "com.android.settings"},
    "wait": {"type": "wait", "seconds": 2},
    "answer": {"type": "answer", "text": "$39"},
    "ask_user": {"type": "ask_user", "text": "Which Alice?"},
    "shell": {"type": "shell", "command": "settings put global wifi_on 1"},
    "tool": {"type": "tool", "name": "calendar.create", "args": {"title": "standup", "at": [9, 30]}},
    "terminate": {"type": "terminate", "status": "infeasible"},
}


def test_examples_cover_every_action_type():
    assert sorted(EXAMPLES) == sorted(ACTION_TYPES)


@pytest.mark.parametrize("kind", ACTION_TYPES)
def test_action_round_trips_through_json(kind):
    data = EXAMPLES[kind]
    action = Action.from_dict(data)
    assert action.type == kind
    assert action.to_dict() == data
    assert Action.from_json(action.to_json()) == action
    assert json.loads(action.to_json()) == data


@pytest.mark.parametrize("data, message", [
    ({"type": "teleport", "x": 1, "y": 1}, "unknown action type 'teleport'"),
    ({"x": 1, "y": 1}, "missing required field 'type'"),
    ({"type": "tap", "x": 1}, "missing required field 'y'"),
    ({"type": "tap", "x": 1, "y": 1, "text": "a"}, "does not take field 'text'"),
    ({"type": "tap", "x": 1, "y": 1, "speed": 3}, "unknown field(s) in 'tap' action: speed"),
    ({"type": "tap", "x": "1", "y": 1}, "tap.x must be a finite number"),
    ({"type": "tap", "x": float("nan"), "y": 1}, "tap.x must be a finite number"),
    ({"type": "key", "key": "volume_up"}, "key must be one of"),
    ({"type": "scroll", "direction": "sideways"}, "scroll.direction must be one of"),
    ({"type": "terminate", "status": "done"}, "terminate.status must be one of"),
    ({"type": "tool", "name": "t", "args": [1]}, "tool.args must be an object"),
    ({"type": "tap", "x": 1, "y": 1, "element": {"bounds": [1, 2, 3]}}, "element bounds must be four integers"),
    ({"type": "input_text", "text": "\ud800"}, "not valid UTF-8"),
])
def test_action_rejects_malformed_input_with_a_clear_message(data, message):
    with pytest.raises(InvalidAction if "UTF-8" not in message else InvalidRecord) as err:
        Action.from_dict(data)
    assert message in str(err.value)


def test_action_points_for_swipe_are_start_and_end():
    assert Action("swipe", x=1, y=2, x2=3, y2=4).points() == [(1, 2), (3, 4)]
    assert Action("key", key="back").points() == []


def test_episode_rejects_tap_outside_the_screenshot():
    step = Step(Observation(png(1)), Action("tap", x=W, y=5))
    with pytest.raises(InvalidRecord, match=rf"step 0: tap at \({W}, 5\) is outside the {W}x{H} screenshot"):
        Episode(instruction="x", source="human", device=Device(W, H), steps=(step,))


def test_episode_rejects_swipe_ending_outside_the_screenshot():
    step = Step(Observation(png(1)), Action("swipe", x=5, y=5, x2=5, y2=-1))
    with pytest.raises(InvalidRecord, match="outside"):
        Episode(instruction="x", source="human", device=Device(W, H), steps=(step,))


@pytest.mark.parametrize("kwargs, message", [
    ({"source": "crawler"}, "source must be one of"),
    ({"outcome": "maybe"}, "outcome must be one of"),
    ({"verified_by": "oracle"}, "verified_by must be one of"),
    ({"instruction": "  "}, "instruction must not be empty"),
    ({"round": -1}, "round must be a non-negative integer"),
])
def test_episode_validates_its_fields(kwargs, message):
    with pytest.raises(InvalidRecord, match=message):
        episode(1, **kwargs)


def test_episode_without_steps_is_rejected():
    with pytest.raises(InvalidRecord, match="no steps"):
        Episode(instruction="x", source="human", device=Device(W, H), steps=())


def test_episode_id_is_derived_from_content_when_absent():
    assert episode(3).episode_id == episode(3).episode_id
    assert episode(3).episode_id != episode(4).episode_id
    assert episode(3, episode_id="mine").episode_id == "mine"


def test_observation_rejects_bytes_that_are_not_png():
    with pytest.raises(InvalidRecord, match="not a PNG"):
        Observation(b"GIF89a....")


def test_device_keeps_extra_fields_in_order():
    data = {"width": 10, "height": 20, "kind": "mock", "density": 420, "model": "mockphone"}
    assert Device.from_dict(data).to_dict() == data
    with pytest.raises(InvalidRecord, match="device.width must be a positive integer"):
        Device.from_dict({"width": 0, "height": 20})
    with pytest.raises(InvalidRecord, match="missing required field 'height'"):
        Device.from_dict({"width": 10})


def test_target_round_trips():
    t = Target(index=2, text="OK", bounds=(1, 2, 3, 4))
    assert Target.from_dict(t.to_dict()) == t
