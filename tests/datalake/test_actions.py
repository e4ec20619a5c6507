"""One action description for people (annotate) and for model histories (rollout prompts)."""

import pytest

from annotate.tasks import in_words
from datalake.actions import UITARS, WORDS, describe
from datalake.types import ACTION_TYPES, Action, Target
from rollout.parsing import parse_output
from rollout.prompts import format_uitars

EXAMPLES = {
    "tap": Action("tap", x=540, y=1210, element=Target(text="Wi-Fi")),
    "double_tap": Action("double_tap", x=10, y=20),
    "long_press": Action("long_press", x=10.5, y=20),
    "swipe": Action("swipe", x=10, y=900, x2=10, y2=200),
    "scroll": Action("scroll", direction="down"),
    "input_text": Action("input_text", text="it's\nme"),
    "key": Action("key", key="home"),
    "open_app": Action("open_app", app="Clock"),
    "wait": Action("wait"),
    "answer": Action("answer", text="42"),
    "ask_user": Action("ask_user", text="Pay now?"),
    "shell": Action("shell", command="ls"),
    "tool": Action("tool", name="search", args={"q": "x"}),
    "terminate": Action("terminate", status="success"),
}


def test_every_action_type_has_an_example():
    assert set(EXAMPLES) == set(ACTION_TYPES)


@pytest.mark.parametrize("vocabulary", [WORDS, UITARS], ids=["words", "uitars"])
def test_every_action_type_is_one_line_in_each_vocabulary(vocabulary):
    for action in EXAMPLES.values():
        text = describe(action, vocabulary)
        assert text and "\n" not in text and "{" not in text and "None" not in text, (action.type, text)


def test_templates_name_only_known_action_types():
    for vocabulary in (WORDS, UITARS):
        assert {name.split(":")[0] for name in vocabulary.templates} <= set(ACTION_TYPES)


def test_words_say_what_a_person_reads():
    assert in_words(EXAMPLES["tap"]) == "tap 'Wi-Fi' at 540,1210"
    assert in_words(EXAMPLES["swipe"]) == "swipe 10,900 -> 10,200"
    assert in_words(EXAMPLES["long_press"]) == "long press at 10.5,20"
    assert in_words(EXAMPLES["key"]) == "press home"
    assert in_words(EXAMPLES["terminate"]) == "terminate (success)"


@pytest.mark.parametrize("kind", ["tap", "double_tap", "long_press", "swipe", "input_text", "open_app", "answer"])
def test_uitars_history_lines_parse_back_to_the_same_action(kind):
    size = (1080, 2400)
    action = EXAMPLES[kind]
    again = parse_output(f"Action: {format_uitars(action, 'abs', size)}", "uitars", "abs", size)[0]
    assert again.type == action.type
    assert (again.x, again.y, again.x2, again.y2, again.text or None, again.app) == \
        (None if action.x is None else round(action.x), action.y, action.x2, action.y2, action.text, action.app)
