import pytest

from curation.formats import ActionParseError
from rollout.parsing import parse_output

SIZE = (1080, 2400)


@pytest.mark.parametrize("text, expected", [
    ("Thought: open it\nAction: click(start_box='(500,500)')", {"type": "tap", "x": 540.0, "y": 1200.0}),
    ("Action: click(start_box='<|box_start|>(100,200)<|box_end|>')", {"type": "tap", "x": 108.0, "y": 480.0}),
    ("Action: click(start_box='[100,200,300,400]')", {"type": "tap", "x": 216.0, "y": 720.0}),
    ("Action: long_press(start_box='(500,500)')", {"type": "long_press", "x": 540.0, "y": 1200.0}),
    ("Action: type(content='hello \\'world\\'')", {"type": "input_text", "text": "hello 'world'"}),
    ("Action: scroll(start_box='(500,500)', direction='down')",
     {"type": "scroll", "direction": "down", "x": 540.0, "y": 1200.0}),
    ("Action: drag(start_box='(500,800)', end_box='(500,200)')",
     {"type": "swipe", "x": 540.0, "y": 1920.0, "x2": 540.0, "y2": 480.0}),
    ("Action: open_app(app_name='Settings')", {"type": "open_app", "app": "Settings"}),
    ("Action: press_back()", {"type": "key", "key": "back"}),
    ("Action: press_home()", {"type": "key", "key": "home"}),
    ("Action: wait()", {"type": "wait", "seconds": 1}),
    ("Action: finished()", {"type": "terminate", "status": "success"}),
])
def test_uitars_actions(text, expected):
    (action,) = parse_output(text, "uitars", "rel1000", SIZE)
    assert action.to_dict() == expected


def test_uitars_finished_with_content_answers_then_terminates():
    actions = parse_output("Action: finished(content='$39')", "uitars", "rel1000", SIZE)
    assert [a.to_dict() for a in actions] == [{"type": "answer", "text": "$39"},
                                             {"type": "terminate", "status": "success"}]


@pytest.mark.parametrize("style, text", [
    ("uitars", "I would click the button"),
    ("uitars", "Action: teleport(start_box='(1,2)')"),
    ("uitars", "Action: click(start_box='(1)')"),
    ("qwen3vl", "click at 500, 500"),
    ("json", '{"type": "tap"}'),
])
def test_unparseable_output_raises(style, text):
    with pytest.raises(ActionParseError):
        parse_output(text, style, "rel1000", SIZE)


def test_json_and_qwen_styles_use_the_training_formats():
    (a,) = parse_output('{"type":"tap","x":500,"y":500}', "json", "rel1000", SIZE)
    (b,) = parse_output('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": '
                        '[500, 500]}}\n</tool_call>', "qwen3vl", "rel1000", SIZE)
    assert a.to_dict() == b.to_dict() == {"type": "tap", "x": 540.0, "y": 1200.0}


def test_uitars_hotkey_drag_and_finished_parse_and_unknown_keys_are_rejected():
    import pytest

    from curation.formats import ActionParseError
    from rollout.parsing import parse_output

    size = (1080, 2400)
    assert parse_output("Action: hotkey(key='back')", "uitars", "rel1000", size)[0].to_dict() == {
        "type": "key", "key": "back"}
    drag = parse_output("Action: drag(start_box='(500,800)', end_box='(500,200)')", "uitars", "rel1000", size)[0]
    assert (drag.type, drag.x, drag.y, drag.x2, drag.y2) == ("swipe", 540.0, 1920.0, 540.0, 480.0)
    answer, done = parse_output("Action: finished(content='42 \\'C')", "uitars", "rel1000", size)
    assert (answer.type, answer.text, done.type) == ("answer", "42 'C", "terminate")
    with pytest.raises(ActionParseError, match="hotkey 'ctrl'"):
        parse_output("Action: hotkey(key='ctrl')", "uitars", "rel1000", size)


def test_uitars_history_is_written_back_in_uitars_syntax():
    from datalake.types import Action
    from rollout.parsing import parse_output
    from rollout.prompts import format_uitars, prompt

    size = (1080, 2400)
    for action in (Action("tap", x=540, y=1200), Action("swipe", x=540, y=1920, x2=540, y2=480),
                   Action("key", key="enter"), Action("input_text", text="it's 5"), Action("open_app", app="Clock")):
        again = parse_output(f"Action: {format_uitars(action, 'rel1000', size)}", "uitars", "rel1000", size)[0]
        assert again.to_dict() == action.to_dict()
    messages = prompt("Turn on Wi-Fi", [(Action("key", key="back"), size)], "uitars", "rel1000")
    assert "1. Action: press_back()" in messages[1]["content"][1]["text"]
