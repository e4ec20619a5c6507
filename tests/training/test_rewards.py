import pytest

from curation.coords import CONVENTIONS, box_to_model
from curation.formats import format_action
from datalake.types import Action
from training.rewards import action_type_reward, format_reward, location_reward, text_reward

SIZE = (1080, 2400)
BOX = (100, 500, 500, 700)  # device px
TAP = Action("tap", x=300, y=600)


def _columns(target: Action, convention: str, box=BOX, n: int = 1) -> dict:
    return {"target_action": [format_action(target, "json", convention, SIZE)] * n,
            "target_box": [box_to_model(box, convention, SIZE) if box else None] * n,
            "width": [SIZE[0]] * n, "height": [SIZE[1]] * n, "coords": [convention] * n,
            "action_format": ["qwen3vl"] * n}


def _completion(action: Action, convention: str, style: str = "qwen3vl") -> list[dict]:
    return [{"role": "assistant", "content": format_action(action, style, convention, SIZE)}]


def _score(fn, predicted, target, convention, box=BOX):
    completion = _completion(predicted, convention) if isinstance(predicted, Action) else predicted
    return fn(None, [completion], **_columns(target, convention, box))[0]


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_tap_inside_target_box_scores_one_in_every_convention(convention):
    assert _score(location_reward, Action("tap", x=490, y=690), TAP, convention) == 1.0
    assert _score(location_reward, Action("tap", x=110, y=505), TAP, convention) == 1.0


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_tap_outside_target_box_scores_zero_in_every_convention(convention):
    assert _score(location_reward, Action("tap", x=520, y=600), TAP, convention) == 0.0
    assert _score(location_reward, Action("tap", x=300, y=720), TAP, convention) == 0.0


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_tap_without_box_scores_by_distance_in_every_convention(convention):
    near, far = Action("tap", x=330, y=640), Action("tap", x=300, y=800)  # 50 px / 200 px; radius ~79 px
    assert _score(location_reward, near, TAP, convention, box=None) == 1.0
    assert _score(location_reward, far, TAP, convention, box=None) == 0.0


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_format_and_type_rewards_in_every_convention(convention):
    assert _score(format_reward, TAP, TAP, convention) == 1.0
    assert _score(action_type_reward, TAP, TAP, convention) == 1.0
    assert _score(action_type_reward, Action("key", key="back"), TAP, convention) == 0.0
    garbage = [{"role": "assistant", "content": "I would tap the button"}]
    assert _score(format_reward, garbage, TAP, convention) == 0.0
    assert _score(action_type_reward, garbage, TAP, convention) == 0.0
    assert _score(location_reward, garbage, TAP, convention) == 0.0


def test_text_reward_is_similarity_of_typed_text():
    target = Action("input_text", text="running late")
    assert _score(text_reward, Action("input_text", text="running late"), target, "rel1000", None) == 1.0
    partial = _score(text_reward, Action("input_text", text="running"), target, "rel1000", None)
    assert 0.3 < partial < 1.0
    assert _score(text_reward, Action("tap", x=1, y=1), target, "rel1000", None) == 0.0


def test_rewards_that_do_not_apply_return_none():
    assert _score(text_reward, TAP, TAP, "rel1000") is None
    assert _score(location_reward, Action("input_text", text="x"), Action("input_text", text="x"), "abs") is None
    online_row = {"target_action": [None], "target_box": [None], "width": [0], "height": [0], "coords": ["rel1000"],
                  "action_format": ["qwen3vl"]}
    for fn in (format_reward, action_type_reward, location_reward, text_reward):
        assert fn(None, [_completion(TAP, "rel1000")], **online_row) == [None]


def test_json_style_completions_are_scored_too():
    cols = _columns(TAP, "rel1", n=1)
    cols["action_format"] = ["json"]
    completion = [{"role": "assistant", "content": format_action(Action("tap", x=300, y=650), "json", "rel1", SIZE)}]
    assert location_reward(None, [completion], **cols) == [1.0]


def test_parsed_tool_calls_are_scored_like_text():
    call = {"type": "function", "function": {"name": "mobile_use",
                                             "arguments": {"action": "click", "coordinate": [277, 250]}}}
    completion = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    assert location_reward(None, [completion], **_columns(TAP, "rel1000")) == [1.0]
