import pytest

from curation.coords import CONVENTIONS, from_model, round_for, smart_resize, to_model
from curation.formats import STYLES, ActionParseError, format_action, parse_action
from datalake.types import Action
from tests.datalake.test_types import EXAMPLES

SIZES = [(1080, 2400), (720, 1600), (1440, 3120), (360, 800)]


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("size", SIZES)
def test_adapters_are_exact_inverses(convention, size):
    for x, y in [(0, 0), (size[0] - 1, size[1] - 1), (123.4, 567.8), (size[0] / 2, 7)]:
        mx, my = to_model(x, y, convention, size)
        bx, by = from_model(mx, my, convention, size)
        assert abs(bx - x) < 1e-6 and abs(by - y) < 1e-6


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("size", SIZES)
def test_round_trip_through_rounded_model_units_stays_within_one_pixel(convention, size):
    worst = 0.0
    for x in range(0, size[0], 7):
        for y in range(0, size[1], 13):
            mx, my = to_model(x, y, convention, size)
            bx, by = from_model(round_for(mx, convention, size), round_for(my, convention, size), convention, size)
            worst = max(worst, abs(bx - x), abs(by - y))
    assert worst <= 1.0


@pytest.mark.parametrize("size", [(720, 1600), (1080, 2400), (1440, 3120)])
def test_rel1000_text_round_trip_is_within_one_pixel(size):
    """Through the text the model is trained on and the parser that reads its answer."""
    worst = 0.0
    for x in range(0, size[0], 11):
        y = (x * 7919) % size[1]
        text = format_action(Action("tap", x=x, y=y), "qwen3vl", "rel1000", size)
        back = parse_action(text, "qwen3vl", "rel1000", size)
        worst = max(worst, abs(back.x - x), abs(back.y - y))
    assert worst <= 1.0


def test_rel1000_uses_integers_on_screens_up_to_2000_px():
    assert '"coordinate": [500, 500]' in format_action(Action("tap", x=360, y=800), "qwen3vl", "rel1000", (720, 1600))


def test_smart_resize_gives_multiples_of_28_within_the_pixel_budget():
    w, h = smart_resize(1080, 2400)
    assert w % 28 == 0 and h % 28 == 0 and w * h <= 12_845_056
    assert abs(w / h - 1080 / 2400) < 0.02


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_every_action_type_formats_and_parses_back(style, kind):
    action = Action.from_dict({k: v for k, v in EXAMPLES[kind].items() if k != "element"})
    if style == "qwen3vl" and kind == "terminate":
        action = Action("terminate", status="success")
    for convention in ("abs", "rel1000"):
        size = (1080, 2400)
        text = format_action(action, style, convention, size)
        back = parse_action(text, style, convention, size)
        assert back.type == action.type
        for a, b in zip(back.points(), action.points()):
            assert abs(a[0] - b[0]) <= 1.2 and abs(a[1] - b[1]) <= 1.2
        for field in ("text", "key", "app", "direction", "command", "name", "status"):
            assert getattr(back, field) == getattr(action, field), field


def test_qwen_tool_call_looks_like_qwen3vl_mobile_use():
    text = format_action(Action("tap", x=540, y=1200), "qwen3vl", "rel1000", (1080, 2400))
    assert text == ('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}'
                    '\n</tool_call>')


@pytest.mark.parametrize("style, text", [
    ("qwen3vl", "I will tap the button"),
    ("qwen3vl", '<tool_call>{"name": "mobile_use", "arguments": {"action": "fly"}}</tool_call>'),
    ("qwen3vl", '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1]}}</tool_call>'),
    ("json", "no json here"),
    ("json", '{"type": "tap", "x": 5}'),
    ("json", '{"type": "warp"}'),
])
def test_unparseable_model_output_raises_action_parse_error(style, text):
    with pytest.raises(ActionParseError):
        parse_action(text, style, "abs", (1080, 2400))
