"""Label Studio labeling interfaces, generated in code.

- ``step_review()``: one step's screenshot with the recorded action pre-filled as a
  prediction; the annotator moves the point (``tap``, ``swipe_start``, ``swipe_end``),
  draws the target element's box, picks the action type (and key, scroll direction or
  terminate status),
  types the text or answer, marks the step correct or incorrect, and leaves a note.
- ``episode_review()``: the instruction, every step's screenshot in order with the
  recorded actions, and the episode's outcome (success, failure, unknown) plus a note.

The control names are the ones ``annotate.convert`` reads back; ``KIND_OF`` tells a
project's review kind from its config.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from datalake.types import ACTION_TYPES, KEYS, OUTCOMES, SCROLL_DIRECTIONS, TERMINATE_STATUSES

KINDS = ("step", "episode")
POINT_LABELS = ("tap", "swipe_start", "swipe_end")


def _choices(name: str, to: str, values, *, header: str, show_if: str | None = None) -> str:
    options = "".join(f"<Choice value={quoteattr(v)}/>" for v in values)
    cond = f' visibleWhen="choice-selected" whenTagName="action_type" whenChoiceValue={quoteattr(show_if)}' \
        if show_if else ""
    return (f'<Header value={quoteattr(header)} size="6"/>'
            f'<Choices name="{name}" toName="{to}" choice="single" showInline="true"{cond}>{options}</Choices>')


def step_review() -> str:
    """The step review interface (task data: image, instruction, recorded_action)."""
    labels = "".join(f'<Label value="{v}" background="{c}"/>'
                     for v, c in zip(POINT_LABELS, ("#e53935", "#1e88e5", "#43a047")))
    return (
        '<View>'
        '<Header value="$instruction"/>'
        '<Text name="recorded" value="$recorded_action"/>'
        '<KeyPointLabels name="point" toName="image" smart="false">' + labels + '</KeyPointLabels>'
        '<RectangleLabels name="element" toName="image"><Label value="target" background="#fb8c00"/>'
        '</RectangleLabels>'
        '<Image name="image" value="$image" zoom="true" zoomControl="true"/>'
        + _choices("action_type", "image", ACTION_TYPES, header="Action type")
        + _choices("key", "image", KEYS, header="Key", show_if="key")
        + _choices("direction", "image", SCROLL_DIRECTIONS, header="Scroll direction", show_if="scroll")
        + _choices("status", "image", TERMINATE_STATUSES, header="Terminate status", show_if="terminate")
        + '<Header value="Typed text or answer (app for open_app, command for shell, name for tool)" size="6"/>'
          '<TextArea name="text" toName="image" maxSubmissions="1" editable="true" rows="2"/>'
        + _choices("step_correct", "image", ("yes", "no"), header="Was the recorded step correct?")
        + '<Header value="Note" size="6"/><TextArea name="note" toName="image" maxSubmissions="1" editable="true"/>'
        '</View>'
    )


def episode_review() -> str:
    """The episode review interface (task data: instruction, images, steps_text)."""
    return (
        '<View>'
        '<Header value="$instruction"/>'
        '<Text name="steps" value="$steps_text"/>'
        '<Image name="frames" valueList="$images"/>'
        + _choices("outcome", "steps", OUTCOMES, header="Did the episode achieve the instruction?")
        + '<Header value="Note" size="6"/><TextArea name="note" toName="steps" maxSubmissions="1" editable="true"/>'
        '</View>'
    )


CONFIGS = {"step": step_review, "episode": episode_review}


def config(kind: str) -> str:
    if kind not in CONFIGS:
        raise ValueError(f"review kind must be one of {KINDS}, got {kind!r}")
    return CONFIGS[kind]()


def kind_of(label_config: str) -> str:
    """The review kind of a project's label config (``step`` unless it is the episode review)."""
    return "episode" if 'name="outcome"' in label_config else "step"
