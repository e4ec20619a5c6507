"""An outcome judge that sees only what real-app RL sees: the final screen, its UI dump, the actions.

On a real phone (and on a real-like one, :mod:`mockphone.reallike`) nothing reads the apps' state:
an episode's reward has to come from its last observation and its action stream. This module
judges that way, by rules per template family; it never imports the mock phone and takes no phone
object, only a :class:`JudgeTask` (what a real task spec holds: the template, its parameters, the
instruction), the final :class:`datalake.types.Observation` and the episode's actions.

Families and their rules (``family_of``):

- ``infeasible``: success iff the episode ends with ``terminate(infeasible)`` (or one answer saying it
  cannot be done), typed nothing and tapped nothing that commits a change (Delete, Save, Send... read
  from the actions' recorded targets, a switch or a check box too; a tap with no recorded target
  counts as one); ``terminate(success)`` is a failure.
- ``toggle``: the wanted switch state, read from the UI dump: the ``Switch`` in the row of the
  setting's label, else the status bar's icons (Wi-Fi, Bluetooth, airplane mode). Not on the final
  screen: unknown.
- ``answer``: exactly one ``answer`` action (none or several, or one that only repeats a parameter
  of the question: failure); its numbers, times and e-mail addresses (or its whole text) shown on
  the final screen: success; otherwise unknown (the value may have been read on an earlier screen).
- ``send``: the text typed last appears on the final screen outside an edit field (a sent bubble, a
  sent item), the recipient and the task's other text parameters (a city, a place) are on it, and
  the typed text holds the task's own text where it has one: success; the text still in an edit
  field: failure (typed, not sent); else unknown.
- ``generic`` (everything else): a removal (Delete, Remove, Unsave...) is never a success from one
  screen, and fails when its item is still shown; otherwise the task's text parameters all shown on
  the final screen outside edit fields, after ``terminate(success)``, and nothing typed that is none
  of them: success; a parameter missing or a foreign text typed: unknown.

Every family fails an episode whose action stream holds an off-task change (a ``tool`` call to an app
the task is not about, a state-changing ``shell`` command about something else), and every family but
``infeasible`` fails an episode that ends by giving up (``terminate(infeasible)``) on a feasible task.
What the rules cannot see is collateral damage off screen (the state verifier's side-effect checks):
``bench/judge_bench.py`` measures the judge against the hidden verifier and reports precision and
recall per family.

The screenshot is carried for a VLM judge (an OpenAI-compatible endpoint, not built yet); these rules
read the UI dump only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from datalake.types import Action, Episode, Observation
from datalake.uitree import UIElement, parse_ui_tree

OUTCOMES = ("success", "failure", "unknown")
FAMILIES = ("infeasible", "toggle", "answer", "send", "generic")

# toggle templates: (words in the template name, the setting's label on screen, status-bar icon prefix)
TOGGLES = (("Wifi", "Wi-Fi", "Wifi"), ("Bluetooth", "Bluetooth", "Bluetooth"),
           ("AirplaneMode", "Airplane mode", "Airplane"), ("DoNotDisturb", "Do not disturb", None),
           ("DarkTheme", "Dark theme", None), ("MobileData", "Mobile data", None),
           ("UnknownSources", "Install unknown apps", None))
SEND_WORDS = ("Send", "Reply", "Forward", "ToMessage", "ToMail", "Share")
ANSWER_WORDS = ("Answer", "Lookup")
GIVE_UP = re.compile(r"\b(cannot|can't|can not|unable|impossible|not possible|doesn't exist|does not exist|no such)\b",
                     re.I)


@dataclass(frozen=True)
class JudgeTask:
    """What a real task spec holds: no verifier, no state."""

    template: str
    params: Mapping[str, Any] = field(default_factory=dict)
    instruction: str = ""
    apps: tuple[str, ...] = ()  # the apps the task is about (short names: "settings", "notes")

    @classmethod
    def of(cls, task, locale: str | None = None) -> "JudgeTask":
        """What the judge may know of a mock task (template, parameters, instruction in ``locale``, by default
        the task's own, and apps), read off the task object alone: nothing of its verifier or the phone."""
        instruction = task.goal if locale is None else task.instruction(locale)
        return cls(type(task).name(), dict(task.params), instruction, tuple(type(task).app_names))


@dataclass(frozen=True)
class Verdict:
    outcome: str  # success | failure | unknown
    reason: str
    family: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"Verdict.outcome must be one of {OUTCOMES}, not {self.outcome!r}")

    @property
    def reward(self) -> float | None:
        """1.0 / 0.0, or None when the judge cannot tell (an RL trainer drops or down-weights those)."""
        return {"success": 1.0, "failure": 0.0}.get(self.outcome)

    def to_meta(self) -> dict[str, str]:
        """What an episode records as ``meta["judge"]``."""
        return {"outcome": self.outcome, "reason": self.reason, "family": self.family, "by": "rules"}


def family_of(template: str) -> str:
    if template.startswith("Infeasible"):
        return "infeasible"
    if _toggle(template) is not None:
        return "toggle"
    if any(w in template for w in ANSWER_WORDS):
        return "answer"
    if any(w in template for w in SEND_WORDS) and not template.startswith(("Safety", "Privacy")):
        return "send"
    return "generic"


def judge(task: JudgeTask, final: Observation, actions: Sequence[Action]) -> Verdict:
    """The verdict on one episode from its final observation and its actions alone."""
    family = family_of(task.template)
    screen = Screen(final.ui_tree)
    ending = _ending(actions)
    stray = _off_task(task, actions)
    if stray is not None:
        return Verdict("failure", f"an off-task change in the action stream: {stray}", family)
    if family == "infeasible":
        return _infeasible(actions, ending)
    if ending is not None and ending.type == "terminate" and ending.status == "infeasible":
        return Verdict("failure", "gave up on a feasible task", family)
    rule = {"toggle": _toggle_rule, "answer": _answer_rule, "send": _send_rule, "generic": _generic_rule}[family]
    return rule(task, screen, actions, family)


def judge_episode(episode: Episode, task: JudgeTask, final: Observation | None = None) -> Episode:
    """``episode`` judged: its outcome from the verdict (``verified_by="judge"``; an unknown verdict leaves the
    outcome ``unknown``) and ``meta["judge"]``. ``final`` defaults to the last step's observation (the screen
    the episode ended on, when it ends with ``terminate`` or ``answer``). No lake schema change: the verdict's
    reason and family live in the episode's meta."""
    if final is None:
        if not episode.steps:
            raise ValueError(f"episode {episode.episode_id or episode.instruction!r} has no steps to judge")
        final = episode.steps[-1].observation
    verdict = judge(task, final, [s.action for s in episode.steps])
    outcome, by = (verdict.outcome, "judge") if verdict.outcome != "unknown" else ("unknown", "none")
    return replace(episode, outcome=outcome, verified_by=by, meta={**episode.meta, "judge": verdict.to_meta()})


# --- what the final screen shows ------------------------------------------------------------

class Screen:
    """The final UI dump as the judge reads it: texts shown, texts in edit fields, switches by label."""

    def __init__(self, ui_tree: str) -> None:
        self.elements: list[UIElement] = parse_ui_tree(ui_tree) if ui_tree else []
        edits = [e for e in self.elements if e.class_name.endswith("EditText")]
        self.edit_texts = [norm(e.text) for e in edits if e.text]
        self.shown = [norm(t) for e in self.elements if not e.class_name.endswith("EditText")
                      for t in (e.text, e.content_desc) if t]
        self.all_text = " \n ".join(self.shown)

    def shows(self, value: str) -> bool:
        """``value`` appears (normalised) in some text or description outside edit fields."""
        v = norm(value)
        return bool(v) and any(v in t for t in self.shown)

    def in_edit(self, value: str) -> bool:
        v = norm(value)
        return bool(v) and any(v in t for t in self.edit_texts)

    def switch(self, label: str) -> bool | None:
        """The checked state of the switch in the row titled ``label``, or None when no such row is shown."""
        want = norm(label)
        by_index = {e.index: e for e in self.elements}
        for e in self.elements:
            if not e.checkable or e.parent is None:
                continue
            siblings = [s for s in self.elements if s.parent == e.parent and s is not e]
            if any(norm(s.text) == want for s in siblings) or norm(by_index[e.parent].content_desc) == want:
                return e.checked
        return None

    def icon(self, prefix: str) -> bool:
        return any(e.content_desc.startswith(prefix) for e in self.elements
                   if e.package == "com.android.systemui" and e.class_name.endswith("ImageView"))

    def shade_open(self) -> bool:
        return any(e.package == "com.android.systemui" and e.resource_id.endswith(":id/content")
                   for e in self.elements)

    def has_status_bar(self) -> bool:
        return any(e.resource_id.endswith("status_bar") for e in self.elements)


def norm(text: str | None) -> str:
    return " ".join(re.sub(r"[^\w@.:+$%/-]+", " ", (text or "").lower()).split())


def _ending(actions: Sequence[Action]) -> Action | None:
    """The first ``terminate`` (only it ends the episode), else the last action that is not a wait."""
    for a in actions:
        if a.type == "terminate":
            return a
    for a in reversed(actions):
        if a.type != "wait":
            return a
    return None


MUTATING_SHELL = re.compile(r"^\s*(svc|settings\s+put|pm\s+(clear|uninstall|disable)|cmd\s+\w+\s+set|rm)\b")


def _words(template: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Z][a-z]+", template) if len(w) >= 4}


def _off_task(task: JudgeTask, actions: Sequence[Action]) -> str | None:
    """A ``tool`` call to an app the task is not about, or a state-changing ``shell`` command about
    something else (the action stream is what a real deployment logs, so this is fair to read)."""
    if not task.apps:
        return None
    keys = _words(task.template) | {"airplane_mode" if "Airplane" in task.template else ""} - {""}
    for a in actions:
        if a.type == "tool" and a.name and a.name.split(".", 1)[0] not in task.apps:
            return f"tool {a.name}"
        if a.type == "shell" and a.command and MUTATING_SHELL.search(a.command):
            command = a.command.lower().replace("-", "")
            if "settings" not in task.apps or not any(k in command for k in keys):
                return f"shell {a.command!r}"
    return None


# --- rules ------------------------------------------------------------------------------------

COMMIT = re.compile(r"\b(delete|remove|save|send|confirm|buy|pay|add|create|set|done|apply|move|rename|book|order|"
                    r"transfer|archive|submit|request)\b", re.I)


def _committed(actions: Sequence[Action]) -> str | None:
    """The label of a tapped element that commits a change (Delete, Save, Send...), from the actions' targets."""
    for a in actions:
        if a.type in ("tap", "long_press", "double_tap") and a.element is None:
            return f"an unrecorded element at ({a.x}, {a.y})"  # what it did is not in the record
        if a.type in ("tap", "long_press", "double_tap"):
            label = f"{a.element.text or ''} {a.element.content_desc or ''}"
            if COMMIT.search(label):
                return label.strip()
            if (a.element.class_name or "").endswith(("Switch", "CheckBox")):  # flipped a setting
                return f"a {a.element.class_name.rsplit('.', 1)[-1]}"
    return None


def _infeasible(actions: Sequence[Action], ending: Action | None) -> Verdict:
    typed = [a for a in actions if a.type == "input_text"]
    answers = [a for a in actions if a.type == "answer"]
    gave_up = (ending is not None and ending.type == "terminate" and ending.status == "infeasible") or (
        len(answers) == 1 and GIVE_UP.search(answers[0].text or "") is not None)
    if not gave_up:
        return Verdict("failure", "did not say the task cannot be done", "infeasible")
    if any(GIVE_UP.search(a.text or "") is None for a in answers):
        return Verdict("failure", "an answer claims it was done", "infeasible")
    if typed:
        return Verdict("unknown", "gave up, but typed first (a substitute may have been made)", "infeasible")
    committed = _committed(actions)
    if committed:
        return Verdict("unknown", f"gave up, but tapped {committed!r} first (a substitute may have been made)",
                       "infeasible")
    return Verdict("success", "said the task cannot be done and typed nothing", "infeasible")


def _toggle(template: str) -> tuple[str, str | None, bool] | None:
    for word, label, icon in TOGGLES:
        if word in template:
            on = not template.endswith("Off")
            return label, icon, on
    return None


def _other_switch(task: JudgeTask, actions: Sequence[Action]) -> str | None:
    """The label of another setting's row the episode tapped (the recorded target's resource-id names it:
    ``.../id/airplane`` is Airplane mode's row): flipping a second switch is collateral damage."""
    for a in actions:
        rid = (a.element.resource_id or "") if a.type in ("tap", "long_press") and a.element else ""
        name = rid.rsplit("/", 1)[-1].replace("_", "").lower()
        if not name:
            continue
        for word, label, _icon in TOGGLES:
            if word not in task.template and (name == word.lower() or word.lower().startswith(name)):
                return label
    return None


def _toggle_rule(task: JudgeTask, screen: Screen, actions: Sequence[Action], family: str) -> Verdict:
    label, icon, want = _toggle(task.template)  # type: ignore[misc]
    other = _other_switch(task, actions)
    if other is not None:
        return Verdict("failure", f"tapped another setting's row too ({other})", family)
    if "QuickSettings" in task.template and screen.shade_open():
        return Verdict("failure", "the notification shade is still open", family)
    state = screen.switch(label)
    where = "switch"
    if state is None and icon is not None and screen.has_status_bar():
        where = "status bar"
        if icon == "Wifi" and screen.icon("Airplane"):
            state = None  # the status bar hides Wi-Fi in airplane mode
        else:
            state = screen.icon(icon)
    if state is None:
        return Verdict("unknown", f"{label} not shown on the final screen", family)
    if state == want:
        return Verdict("success", f"{label} is {'on' if want else 'off'} ({where})", family)
    return Verdict("failure", f"{label} is {'on' if state else 'off'} ({where}), wanted {'on' if want else 'off'}",
                   family)


TOKENS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+|\d{1,2}:\d{2}|\d[\d,]*(?:\.\d+)?")


def _answer_rule(task: JudgeTask, screen: Screen, actions: Sequence[Action], family: str) -> Verdict:
    answers = [a for a in actions if a.type == "answer"]
    if not answers:
        return Verdict("failure", "no answer given", family)
    if len(answers) > 1:
        return Verdict("failure", f"{len(answers)} answers given", family)
    text = answers[0].text or ""
    tokens = [t.replace(",", "") for t in TOKENS.findall(text)]
    shown = {t.replace(",", "") for t in TOKENS.findall(screen.all_text)}
    if tokens and all(t in shown or t.lstrip("0") in shown for t in tokens):
        return Verdict("success", f"the answer's values {tokens} are on the final screen", family)
    params = [norm(str(v)) for v in task.params.values() if isinstance(v, str) and str(v).strip()]
    if norm(text) and any(norm(text) in p or p == norm(text) for p in params):
        return Verdict("failure", "the answer only repeats what the question named", family)
    if not tokens and screen.shows(text):
        return Verdict("success", "the answer is on the final screen", family)
    return Verdict("unknown", "the answer is not on the final screen", family)


def _typed(actions: Sequence[Action]) -> list[str]:
    return [a.text for a in actions if a.type == "input_text" and a.text]


def _recipients(task: JudgeTask) -> list[str]:
    return [str(task.params[k]) for k in ("name", "to", "target") if isinstance(task.params.get(k), str)]


def _send_rule(task: JudgeTask, screen: Screen, actions: Sequence[Action], family: str) -> Verdict:
    typed = _typed(actions)
    if not typed and not any(a.type in ("tool", "shell") for a in actions):
        return Verdict("failure", "nothing was typed", family)
    body = typed[-1] if typed else ""
    wanted = next((str(task.params[k]) for k in ("text", "body") if isinstance(task.params.get(k), str)), "")
    if wanted and typed and not any(norm(wanted) in norm(t) for t in typed):
        return Verdict("failure", "the typed text is not the task's", family)
    if body and screen.in_edit(body) and not screen.shows(body):
        return Verdict("failure", "the text is still in an edit field (typed, not sent)", family)
    if not body or not screen.shows(body):
        return Verdict("unknown", "the sent text is not on the final screen", family)
    missing = [r for r in _recipients(task) if not screen.shows(r)]
    if missing:
        return Verdict("unknown", f"sent text shown, recipient {missing[0]!r} not on the final screen", family)
    others = [str(v) for k, v in task.params.items() if isinstance(v, str) and k not in ("name", "to", "target",
                                                                                          "text", "body")]
    absent = [v for v in others if not screen.shows(v)]
    if absent:  # what the message is about (a city, a place, a subject) is not on the screen it was sent from
        return Verdict("unknown", f"sent text shown, but {absent[0]!r} is not on the final screen", family)
    return Verdict("success", "the sent text and its recipient are on the final screen", family)


REMOVAL = ("Delete", "Remove", "Unsave", "Unfollow", "Clear", "Empty", "Cancel", "Archive", "Forget", "Hide",
           "Unstar", "Disable")


def _generic_rule(task: JudgeTask, screen: Screen, actions: Sequence[Action], family: str) -> Verdict:
    if any(w in task.template for w in REMOVAL):
        return _removal_rule(task, screen, actions, family)
    ending = _ending(actions)
    if ending is None or ending.type != "terminate" or ending.status != "success":
        return Verdict("unknown", "the episode did not end with terminate(success)", family)
    values = [str(v) for v in task.params.values() if isinstance(v, str) and len(str(v).strip()) >= 2]
    if not values:
        return Verdict("unknown", "no text parameter to look for on the final screen", family)
    params = [norm(str(v)) for v in task.params.values() if str(v).strip()]
    foreign = [t for t in _typed(actions) if not any(norm(t) in p for p in params)]
    if foreign:  # e.g. the same done a second time, for another target
        return Verdict("unknown", f"typed {foreign[0]!r}, which is none of the task's parameters", family)
    for v in values:
        if not screen.shows(v):
            why = "still in an edit field" if screen.in_edit(v) else "not on the final screen"
            return Verdict("unknown", f"parameter {v!r} {why}", family)
    return Verdict("success", "every text parameter is on the final screen", family)


def _removal_rule(task: JudgeTask, screen: Screen, actions: Sequence[Action], family: str) -> Verdict:
    """A removal is never proven by one screen (the item may be elsewhere); an item still listed disproves it."""
    values = [str(v) for v in task.params.values() if isinstance(v, str) and len(str(v).strip()) >= 2]
    shown = [v for v in values if screen.shows(v)]
    if shown:
        return Verdict("failure", f"{shown[0]!r} is still on the final screen", family)
    return Verdict("unknown", "a removal: its absence from one screen proves nothing", family)
