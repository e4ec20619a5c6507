"""Label Studio labeling interfaces, generated in code.

- ``step_review()``: fits one 1920x1080 screen. Left, the before frame (the recorded
  action drawn on it as the prediction: tap point, swipe start and end and the arrow
  from one to the other, target box)
  and the after frame side by side, each 380 px wide; right, the instruction, the
  recorded action in words, the model's raw output and score (a step whose output did
  not parse reads INVALID and starts with nothing selected), the point and box labels,
  then the controls: the action
  type, key, scroll direction or terminate status, text, whether the recorded step
  was correct, a reviewer's verdict and a note. Every choice has a keyboard shortcut
  (``HOTKEYS``).
- ``side_by_side_review()`` (kind ``review``): the step review for a reviewer, over the
  answers the annotators already gave: a table of every annotator's answer (by e-mail)
  above the controls, one prediction per annotator (their answer drawn on the frame; the
  form starts from one of them), and the verdict asked for first. Only an explicit
  accept / fix / reject counts (``annotate.convert``); a submit without one is an accept
  of the annotators' answer (the majority, by ``steps_resolved``'s rule).
- ``episode_review()``: every step's screenshot in order (paged), each with its recorded
  action drawn, beside the instruction, the actions in words, the episode's outcome
  (nothing pre-selected)
  (success, failure, unknown), a reviewer's verdict and a note.

The control names are the ones ``annotate.convert`` reads back; ``kind_of`` tells a
project's review kind from its config.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from datalake.types import ACTION_TYPES, KEYS, OUTCOMES, SCROLL_DIRECTIONS, TERMINATE_STATUSES

KINDS = ("step", "episode", "review")
POINT_LABELS = ("tap", "swipe_start", "swipe_end")
# The swipe's path, drawn as an arrow-shaped polygon from start to end (a drawing aid:
# ``annotate.convert`` does not read it; the points carry the action). Hotkey "p", clear
# of the digits (point and box labels, reviewer's verdict) and the choices' letters.
ARROW = ('<PolygonLabels name="path" toName="{to}" showInline="true" strokeWidth="2" opacity="0.9" '
         'pointSize="none" snap="none"><Label value="swipe path" background="#1e88e5" hotkey="p"/></PolygonLabels>')
VERDICTS = ("accept", "fix", "reject")
# one key per choice (digits 1-4 are Label Studio's for the point and box labels)
HOTKEYS = {
    "action_type": dict(zip(ACTION_TYPES, "tdlsrikowaqhxe")),
    "step_correct": {"yes": "y", "no": "n"},
    "review": {"accept": "5", "fix": "6", "reject": "7"},
    "outcome": {"success": "s", "failure": "f", "unknown": "u"},
}
FRAME_WIDTH_PX = 380  # a 1080x2400 frame at this width is 844 px tall: fits a 1080p screen below the toolbar
_PANE = "display:flex;flex-direction:row;gap:12px;align-items:flex-start"


def _choices(name: str, to: str, values, *, header: str, show_if: str | None = None) -> str:
    keys = HOTKEYS.get(name, {})
    options = "".join(f"<Choice value={quoteattr(v)}" + (f' hotkey="{keys[v]}"' if v in keys else "") + "/>"
                      for v in values)
    body = (f'<Header value={quoteattr(header)} size="6"/>'
            f'<Choices name="{name}" toName="{to}" choice="single" showInline="true">{options}</Choices>')
    if show_if is None:
        return body
    return (f'<View visibleWhen="choice-selected" whenTagName="action_type" whenChoiceValue={quoteattr(show_if)}>'
            f'{body}</View>')


def _frame(name: str, value: str, caption: str) -> str:
    return (f'<View style="flex:0 0 {FRAME_WIDTH_PX}px"><Header value={quoteattr(caption)} size="6"/>'
            f'<Image name="{name}" value="{value}" width="{FRAME_WIDTH_PX}px" maxWidth="{FRAME_WIDTH_PX}px"'
            ' zoom="true" zoomControl="false"/></View>')


def step_review(answers: str = "", verdict_header: str = "Reviewers only: accept / fix / reject (5/6/7)") -> str:
    """The step review interface (task data: image, after_image, instruction, action_text, recorded_action);
    ``answers``: markup shown above the controls (the side-by-side review's table)."""
    labels = "".join(f'<Label value="{v}" background="{c}"/>'
                     for v, c in zip(POINT_LABELS, ("#e53935", "#1e88e5", "#43a047")))
    frames = (_frame("image", "$image", "before (recorded action drawn)")
              + _frame("after", "$after_image", "$after_caption"))
    controls = (
        _choices("action_type", "image", ACTION_TYPES, header="Action type")
        + _choices("key", "image", KEYS, header="Key", show_if="key")
        + _choices("direction", "image", SCROLL_DIRECTIONS, header="Scroll direction", show_if="scroll")
        + _choices("status", "image", TERMINATE_STATUSES, header="Terminate status", show_if="terminate")
        + '<Header value="Text or answer (app for open_app, command for shell, name for tool)" size="6"/>'
          '<TextArea name="text" toName="image" maxSubmissions="1" editable="true" rows="1"/>'
        + _choices("step_correct", "image", ("yes", "no"), header="Was the recorded step correct? (y/n)")
        + _choices("review", "image", VERDICTS, header=verdict_header)
        + '<Header value="Note" size="6"/><TextArea name="note" toName="image" maxSubmissions="1" '
          'editable="true" rows="1"/>')
    return (
        f'<View style="{_PANE}">' + frames +
        '<View style="flex:1 1 auto;min-width:420px">'
        '<Header value="$instruction" size="5"/><Text name="words" value="$action_text"/>'
        '<Text name="model" value="$model_text"/>' + answers +
        '<KeyPointLabels name="point" toName="image" smart="false" showInline="true">' + labels + '</KeyPointLabels>'
        + ARROW.format(to="image") +
        '<RectangleLabels name="element" toName="image" showInline="true">'
        '<Label value="target" background="#fb8c00"/></RectangleLabels>'
        + controls + '</View>'
        '</View>'
    )


def side_by_side_review() -> str:
    """The reviewer's step review over the annotators' answers (task data as ``step_review``'s, plus
    ``answers_html``: a table of each annotator's answer by e-mail, and ``review: true``)."""
    table = ('<Header value="What each annotator answered (one prediction each: pick one to start from)" '
             'size="6"/><HyperText name="answers" value="$answers_html" inline="true"/>')
    return step_review(table, verdict_header="Your verdict (required to count): accept / fix / reject (5/6/7); "
                                             "a submit without one accepts the annotators' majority")


def episode_review() -> str:
    """The episode review interface (task data: instruction, images, steps_text): every frame
    (paged, each with its step's recorded action drawn) beside the steps in words and the verdict."""
    labels = "".join(f'<Label value="{v}" background="{c}"/>'
                     for v, c in zip(POINT_LABELS, ("#e53935", "#1e88e5", "#43a047")))
    return (
        f'<View style="{_PANE}">'
        f'<View style="flex:0 0 {FRAME_WIDTH_PX}px">'
        f'<Image name="frames" valueList="$images" width="{FRAME_WIDTH_PX}px"/></View>'
        '<View style="flex:1 1 auto;min-width:420px">'
        '<Header value="$instruction" size="5"/>'
        '<Text name="steps" value="$steps_text"/>'
        '<KeyPointLabels name="point" toName="frames" smart="false" showInline="true">' + labels + '</KeyPointLabels>'
        + ARROW.format(to="frames") +
        '<RectangleLabels name="element" toName="frames" showInline="true">'
        '<Label value="target" background="#fb8c00"/></RectangleLabels>'
        + _choices("outcome", "steps", OUTCOMES, header="Did the episode achieve the instruction? (s/f/u)")
        + _choices("review", "steps", VERDICTS, header="Reviewers only: accept / fix / reject (5/6/7)")
        + '<Header value="Note" size="6"/><TextArea name="note" toName="steps" maxSubmissions="1" editable="true"/>'
        '</View></View>'
    )


CONFIGS = {"step": step_review, "episode": episode_review, "review": side_by_side_review}


def config(kind: str) -> str:
    if kind not in CONFIGS:
        raise ValueError(f"review kind must be one of {KINDS}, got {kind!r}")
    return CONFIGS[kind]()


def kind_of(label_config: str) -> str:
    """The review kind of a project's label config (``step`` unless it is the episode or side-by-side review)."""
    if 'name="outcome"' in label_config:
        return "episode"
    return "review" if 'name="answers"' in label_config else "step"
