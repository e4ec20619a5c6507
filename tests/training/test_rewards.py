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


# --- the whole action: every wrong-argument case, every convention ---------------------------------

from training.rewards import action_matches, argument_reward  # noqa: E402

WRONG_ARGUMENTS = [  # (target, a prediction of the right type with a wrong argument)
    (Action("key", key="back"), Action("key", key="home")),
    (Action("key", key="home"), Action("key", key="back")),
    (Action("key", key="enter"), Action("key", key="app_switch")),
    (Action("scroll", direction="down"), Action("scroll", direction="up")),
    (Action("scroll", direction="left"), Action("scroll", direction="right")),
    (Action("terminate", status="success"), Action("terminate", status="infeasible")),
    (Action("terminate", status="infeasible"), Action("terminate", status="success")),
    (Action("swipe", x=540, y=1800, x2=540, y2=600), Action("swipe", x=540, y=600, x2=540, y2=1800)),
    (Action("swipe", x=900, y=1200, x2=100, y2=1200), Action("swipe", x=100, y=1200, x2=900, y2=1200)),
]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("style", ["qwen3vl", "json"])
@pytest.mark.parametrize("target,wrong", WRONG_ARGUMENTS, ids=lambda a: a.to_json() if isinstance(a, Action) else a)
def test_wrong_argument_scores_zero_though_the_type_is_right(target, wrong, convention, style):
    cols = _columns(target, convention, box=None)
    cols["action_format"] = [style]
    right = [{"role": "assistant", "content": format_action(target, style, convention, SIZE)}]
    bad = [{"role": "assistant", "content": format_action(wrong, style, convention, SIZE)}]
    assert action_type_reward(None, [bad], **cols) == [1.0]
    assert argument_reward(None, [bad], **cols) == [0.0]
    assert argument_reward(None, [right], **cols) == [1.0]
    assert not action_matches(wrong, target, None, convention, SIZE)
    assert action_matches(target, target, None, convention, SIZE)


def test_argument_reward_needs_the_right_type_and_skips_actions_without_arguments():
    assert _score(argument_reward, Action("tap", x=1, y=1), Action("key", key="back"), "abs", None) == 0.0
    assert _score(argument_reward, Action("key", key="back"), TAP, "abs") is None
    assert _score(argument_reward, [{"role": "assistant", "content": "Back"}], Action("key", key="back"),
                  "abs", None) == 0.0


@pytest.mark.parametrize("convention", CONVENTIONS + ("resized:32:1024:8192",))
def test_junk_around_the_call_loses_the_format_reward_only(convention):
    call = format_action(TAP, "qwen3vl", convention, SIZE)
    for text in (f"Sure! {call}", f"{call}\nDone.", f"{call}\n{call}", f"<think>tap it</think>{call}"):
        completion = [{"role": "assistant", "content": text}]
        assert _score(format_reward, completion, TAP, convention) == 0.0, text
        assert _score(action_type_reward, completion, TAP, convention) == 1.0, text
    assert _score(format_reward, [{"role": "assistant", "content": f"\n{call}\n"}], TAP, convention) == 1.0


def test_json_format_is_strict_too():
    cols = _columns(TAP, "abs", n=1)
    cols["action_format"] = ["json"]
    good = format_action(TAP, "json", "abs", SIZE)
    assert format_reward(None, [good], **cols) == [1.0]
    assert format_reward(None, [f"Action: {good}"], **cols) == [0.0]
    assert format_reward(None, [good + " " + good], **cols) == [0.0]


@pytest.mark.parametrize("target", [Action("input_text", text="Running  Late!"), Action("answer", text="42 km"),
                                    Action("open_app", app="Settings"), Action("ask_user", text="Which card?")])
def test_text_is_compared_normalised_and_wrong_text_scores_low(target):
    field = "app" if target.type == "open_app" else "text"
    value = getattr(target, field)
    same = Action(target.type, **{field: " " + value.upper().replace("  ", " ") + " "})
    other = Action(target.type, **{field: "zzzzqqqq"})
    assert _score(text_reward, same, target, "abs", None) == 1.0
    assert _score(text_reward, other, target, "abs", None) < 0.3
    assert action_matches(same, target) and not action_matches(other, target)


def test_wrong_typed_text_fails_the_whole_action_match():
    target = Action("input_text", text="running late")
    assert not action_matches(Action("input_text", text="running"), target)
    assert not action_matches(Action("tap", x=1, y=1), target)


@pytest.mark.parametrize("convention", CONVENTIONS + ("resized:32:1024:8192",))
def test_action_match_checks_the_target_box_in_every_convention(convention):
    assert action_matches(Action("tap", x=490, y=690), TAP, BOX, "abs", SIZE)
    assert not action_matches(Action("tap", x=520, y=600), TAP, BOX, "abs", SIZE)
    assert not action_matches(Action("long_press", x=300, y=600), TAP, BOX, "abs", SIZE)
    cols = _columns(TAP, convention)
    inside = _completion(Action("tap", x=490, y=690), convention)
    outside = _completion(Action("tap", x=300, y=720), convention)
    assert location_reward(None, [inside, outside], **{k: v * 2 for k, v in cols.items()}) == [1.0, 0.0]
