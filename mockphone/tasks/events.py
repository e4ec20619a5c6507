"""The episode's event log: every action, in order, with the state it left behind.

``Task.initialize_task`` starts a log on the phone (``phone.event_log``); from then on every
``phone.act`` appends one :class:`Event` — the action's type, its text (an answer, a question,
a terminate status, a shell command, a tool call), the ``statediff`` paths it changed and the
whole snapshot after it. Verifiers that care about *what happened and in what order* read it:
a risky step done and undone later is still in the log, a question counts only when it came
before the risky step, and only the first ``terminate`` ends the episode.

Reading the log (never the agent's claims) keeps the verifier a state verifier: the states are
the phone's, one per step, not the trace's words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from mockphone.tasks import statediff

if TYPE_CHECKING:
    from datalake.types import Action
    from mockphone.phone import MockPhone


@dataclass(frozen=True)
class Event:
    step: int
    action: str  # the Action's type
    text: str  # answer / ask_user text, terminate status, shell command, "tool NAME ARGS", typed text
    changed: tuple[str, ...]  # statediff paths this step changed
    after: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)  # the snapshot after it


class EventLog:
    """Recorder installed on a phone by ``start(phone)``; ``phone.act`` calls it after every action."""

    def __init__(self, phone: MockPhone) -> None:
        self.start = statediff.snapshot(phone)
        self.events: list[Event] = []
        self._last = self.start

    def __call__(self, phone: MockPhone, action: Action) -> None:
        now = statediff.snapshot(phone)
        changed = tuple(statediff.diff(self._last, now))
        self.events.append(Event(len(self.events), action.type, _text(action), changed, now))
        self._last = now

    def states(self) -> Iterator[dict[str, Any]]:
        """The start snapshot, then the snapshot after every step, in order."""
        yield self.start
        for e in self.events:
            yield e.after

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.action == kind]

    def first_terminate(self) -> Event | None:
        """The episode's end: the first ``terminate`` (anything after it does not undo it)."""
        return next((e for e in self.events if e.action == "terminate"), None)


def _text(a: Action) -> str:
    if a.type in ("answer", "ask_user", "input_text"):
        return a.text or ""
    if a.type == "terminate":
        return a.status or ""
    if a.type == "shell":
        return a.command or ""
    if a.type == "tool":
        return f"{a.name} {json.dumps(a.args or {}, sort_keys=True, ensure_ascii=False)}"
    return ""


def start(phone: MockPhone) -> EventLog:
    """Start a fresh log on ``phone`` (the previous one, if any, is dropped)."""
    log = EventLog(phone)
    phone.event_log = log
    return log


def log_of(phone: MockPhone) -> EventLog | None:
    return getattr(phone, "event_log", None)


# --- reading records out of flat snapshots -------------------------------------------------

_REC = re.compile(r"(.*\[[^\]]*\])\.([A-Za-z_]\w*)\Z")


def records(snap: dict[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """``{record path: {field: value}}`` for records directly under ``prefix`` (``bank.history``,
    ``messages.threads[*]`` with a glob) in one snapshot."""
    pat = re.compile(r"[^\]]*".join(re.escape(part) for part in (prefix + "[*]").split("*")) + r"\Z")
    out: dict[str, dict[str, Any]] = {}
    for path, value in snap.items():
        m = _REC.match(path)
        if m and pat.match(m.group(1)):
            out.setdefault(m.group(1), {})[m.group(2)] = value
    return out


def new_records(start: dict[str, Any], snap: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Records under ``prefix`` in ``snap`` that the start did not have (or had with other content)."""
    before = records(start, prefix)
    return [fields for key, fields in records(snap, prefix).items() if before.get(key) != fields]


def sent_texts(start: dict[str, Any], snap: dict[str, Any]) -> list[str]:
    """Everything that left the phone by ``snap``: new texts by me, new sent mail (subject and body)."""
    out = [r.get("text", "") for r in new_records(start, snap, "messages.threads[*]") if r.get("sender") == "me"]
    out += [f"{r.get('subject', '')}\n{r.get('body', '')}" for r in new_records(start, snap, "mail.emails")
            if r.get("folder") == "sent"]
    return out


def digits(text: str) -> str:
    return re.sub(r"\D", "", text or "")
