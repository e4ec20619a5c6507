"""The element-list format: numbered marks, element-number actions to pixels and back, on real mock screens."""

import pytest

from curation.coords import CONVENTIONS
from curation.elements import format_with_marks, mark_for, marks, marks_from_text, parse_with_marks, render_marks
from curation.formats import ActionParseError
from datalake.types import Action, Observation
from mockphone.layout import Display
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import UI
from mockphone.tasks.registry import REGISTRY, get
from training.rewards import action_matches, format_reward, location_reward

W, H = 1080, 2400  # the default display: the oracles are written for it
TASKS = sorted(REGISTRY)[::9][:12]  # a spread of apps and kinds, kept small for 2 cores


def _replay_through_marks(task_name: str, seed: int, style: str, convention: str):
    """Run the oracle, but send every action through element-number text and back before acting."""
    phone = MockPhone(display=Display(W, H))
    phone.reset(seed)
    task = get(task_name)(seed=seed)
    task.initialize_task(phone)
    named = 0
    for action in task.oracle(UI(phone)):
        obs: Observation = phone.observe()
        items = marks(obs.ui_tree, (W, H))
        text = format_with_marks(action, style, convention, (W, H), items)
        back = parse_with_marks(text, style, convention, (W, H), items)
        if '"element"' in text:
            named += 1
            assert back.element is not None and back.type == action.type
            assert format_with_marks(back, style, convention, (W, H), items) == text  # pixels -> number again
        phone.act(back)
    return task.is_successful(phone), named


@pytest.mark.parametrize("task_name", TASKS)
def test_oracle_replayed_through_element_numbers_still_succeeds(task_name):
    score, _ = _replay_through_marks(task_name, seed=3, style="qwen3vl", convention="rel1000")
    assert score == 1.0


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("style", ["json", "qwen3vl"])
def test_element_numbers_round_trip_in_every_convention_and_style(style, convention):
    total = 0
    for task_name in TASKS[:4]:
        score, named = _replay_through_marks(task_name, seed=1, style=style, convention=convention)
        assert score == 1.0
        total += named
    assert total > 0  # the oracle's taps really went through element numbers


@pytest.fixture(scope="module")
def screen():
    phone = MockPhone(display=Display(W, H))
    phone.reset(0)
    return phone.observe()



def test_marks_list_the_launcher_icons_with_their_boxes(screen):
    items = marks(screen.ui_tree, (W, H))
    text = render_marks(items, "abs", (W, H))
    assert len(items) >= 4 and text.count("\n") == len(items) - 1
    assert [m.number for m in items] == list(range(1, len(items) + 1))
    assert [m.element.bounds for m in marks_from_text(text, "abs", (W, H))] == [m.element.bounds for m in items]
    for m in items:
        x1, y1, x2, y2 = m.element.bounds
        assert 0 <= x1 < x2 <= W and 0 <= y1 < y2 <= H


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_marks_read_back_from_a_prompt_keep_the_centre_inside_the_box(screen, convention):
    items = marks(screen.ui_tree, (W, H))
    again = marks_from_text("Task: x\nElements:\n" + render_marks(items, convention, (W, H)), convention, (W, H))
    for a, b in zip(items, again):
        x, y = b.center
        x1, y1, x2, y2 = a.element.bounds
        assert x1 <= x < x2 and y1 <= y < y2


def test_unknown_element_number_is_a_parse_error_naming_it(screen):
    items = marks(screen.ui_tree, (W, H))
    bad = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "element": 999}}\n</tool_call>'
    with pytest.raises(ActionParseError, match="999"):
        parse_with_marks(bad, "qwen3vl", "rel1000", (W, H), items)
    with pytest.raises(ActionParseError, match="element number"):
        parse_with_marks('{"type":"tap","element":"send"}', "json", "abs", (W, H), items)


def test_point_outside_every_mark_keeps_its_coordinates(screen):
    items = marks(screen.ui_tree, (W, H))
    far = Action("tap", x=W - 1, y=H // 2)
    if mark_for(far, items) is None:
        assert '"coordinate"' in format_with_marks(far, "qwen3vl", "rel1000", (W, H), items)
    assert mark_for(Action("key", key="back"), items) is None


def test_rewards_score_element_number_completions_against_the_prompts_list(screen):
    items = marks(screen.ui_tree, (W, H))
    target_mark = items[len(items) // 2]
    x1, y1, x2, y2 = target_mark.element.bounds
    target = Action("tap", x=(x1 + x2) // 2, y=(y1 + y2) // 2)
    prompt = [{"role": "user", "content": [{"type": "text", "text": "Elements:\n" + render_marks(items, "rel1000",
                                                                                                   (W, H))}]}]
    from curation.coords import box_to_model
    from curation.formats import format_action

    cols = {"target_action": [format_action(target, "json", "rel1000", (W, H))] * 2,
            "target_box": [box_to_model(target_mark.element.bounds, "rel1000", (W, H))] * 2,
            "width": [W] * 2, "height": [H] * 2, "coords": ["rel1000"] * 2, "action_format": ["qwen3vl"] * 2}
    other = next(m for m in items if m.element.bounds != target_mark.element.bounds
                 and not (m.element.bounds[0] <= target.x < m.element.bounds[2]
                          and m.element.bounds[1] <= target.y < m.element.bounds[3]))
    call = '<tool_call>\n{{"name": "mobile_use", "arguments": {{"action": "click", "element": {}}}}}\n</tool_call>'
    right, wrong = call.format(target_mark.number), call.format(other.number)
    assert location_reward([prompt] * 2, [right, wrong], **cols) == [1.0, 0.0]
    assert format_reward([prompt] * 2, [right, wrong], **cols) == [1.0, 1.0]
    assert action_matches(parse_with_marks(right, "qwen3vl", "rel1000", (W, H), items), target,
                          target_mark.element.bounds, "abs", (W, H))


def _episode_rows(task_name: str, seed: int):
    from curation.workset import EpisodeRow, StepRow
    from tests.training.mockdata import oracle_episode

    ep = oracle_episode(task_name, seed)
    w, h = ep.device.width, ep.device.height
    steps = [StepRow(index=i, frame_sha=s.observation.sha256, width=w, height=h, action_json=s.action.to_json(),
                     action=s.action, ui_tree=s.observation.ui_tree, image=s.observation.screenshot)
             for i, s in enumerate(ep.steps)]
    return EpisodeRow(episode_id="e1", instruction=ep.instruction, source="oracle", phone="mock", app=ep.app,
                      category=None, task=task_name, outcome=ep.outcome, verified_by="verifier", policy=None,
                      round=None, width=w, height=h, steps=steps)


@pytest.mark.parametrize("style", ["json", "qwen3vl"])
def test_sft_export_with_elements_lists_marks_and_answers_by_number(style):
    from curation.exports import grpo_rows, sft_rows

    row = _episode_rows("ClockDisableAlarm", 2)
    params = {"coords": "rel1000", "action_format": style, "history": 2, "previous_screenshot": False,
              "thought": False, "elements": True}
    sft = list(sft_rows([row], params, lambda s: s.image))
    grpo = list(grpo_rows([row], params, lambda s: s.image))
    assert len(sft) == len(grpo) == len(row.steps)
    named = 0
    for r, g, s in zip(sft, grpo, row.steps):
        user = r["messages"][1]["content"][-1]["text"]
        assert "Elements:\n[1] " in user and "element" in r["messages"][0]["content"][0]["text"]
        answer = r["messages"][2]["content"][0]["text"]
        items = marks_from_text(user, "rel1000", (s.width, s.height))
        back = parse_with_marks(answer, style, "rel1000", (s.width, s.height), items)
        named += '"element"' in answer
        box = s.action.element.bounds if s.action.element is not None else None
        assert action_matches(back, s.action, box, "abs", (s.width, s.height)), (answer, s.action)
        assert format_reward([g["prompt"]], [answer], **{k: [g[k]] for k in
               ("target_action", "target_box", "width", "height", "coords", "action_format")}) == [1.0]
    assert named >= 1
    plain = dict(params, elements=False)
    assert "Elements:" not in list(sft_rows([row], plain, lambda s: s.image))[0]["messages"][1]["content"][-1]["text"]
