"""Recording demonstrations take after take, so that none is lost (``phoneloop collect record``).

    takes = record_takes(start, keep, episodes=3, read_line=input, say=print)

Modelled on LeRobot's recorder: the operator does the task, ends the take (Enter), and
answers with a key: ``s`` (or Enter, or ``y``) keeps it as a success, ``f`` (or ``n``) as a failure, ``r`` records
it again (this take is dropped), ``d`` drops it and goes on to the next take, ``q`` keeps
nothing more and stops. ``episodes`` counts takes kept or dropped; redone ones do not count.

A take survives what ends a session: Ctrl-C (``KeyboardInterrupt``), SIGTERM
(``install_sigterm`` turns it into ``Stopped``) and the end of input (``EOFError`` from
``read_line``) stop the take being recorded and keep what it recorded, outcome ``unknown``
and ``meta.stopped`` naming why; then the session ends. The caller opens and checks the
lake before the first take, so a lake that cannot be written fails before anyone records.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from phones.errors import EpisodeAborted

KEYS = {"": "success", "s": "success", "y": "success", "f": "failure", "n": "failure", "r": "redo", "d": "discard",
        "q": "quit"}
PROMPT = "[s]uccess (Enter) / [f]ailure / [r]edo / [d]iscard / [q]uit"


class Stopped(BaseException):
    """The session was told to end (SIGTERM); like KeyboardInterrupt, not an error of the take."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def install_sigterm() -> None:
    """SIGTERM raises ``Stopped("sigterm")`` in the main thread, so the take in progress is kept."""
    def handler(signum, frame):
        raise Stopped("sigterm")
    signal.signal(signal.SIGTERM, handler)


@dataclass
class TakesReport:
    kept: list[Any] = field(default_factory=list)  # episodes handed to ``keep``
    discarded: int = 0
    redone: int = 0
    stopped: str | None = None  # why the session ended early: sigint | sigterm | end of input | quit
    empty: list[str] = field(default_factory=list)  # why takes that recorded nothing were not kept


def record_takes(start: Callable[[], Any], keep: Callable[[Any], None], *, episodes: int = 1,
                 read_line: Callable[[str], str] = input, say: Callable[[str], None] = print) -> TakesReport:
    """Record ``episodes`` takes with ``start()`` (a started Recorder); ``keep(episode)`` writes one."""
    report = TakesReport()
    take = 1
    while take <= episodes:
        recorder = start()
        say(f"take {take}/{episodes}: do the task on the phone, then press Enter")
        try:
            read_line("")
            answer = KEYS.get(read_line(PROMPT + " ").strip().lower()[:1], None)
            while answer is None:
                answer = KEYS.get(read_line(PROMPT + " ").strip().lower()[:1], None)
        except KeyboardInterrupt:
            report.stopped = "sigint"
        except Stopped as exc:
            report.stopped = exc.reason
        except EOFError:
            report.stopped = "end of input"
        if report.stopped is not None:
            _keep(recorder, keep, report, success=None, stopped=report.stopped)
            return report
        if answer in ("success", "failure"):
            _keep(recorder, keep, report, success=answer == "success")
        elif answer == "quit":
            _drop(recorder)
            report.stopped = "quit"
            return report
        else:
            _drop(recorder)
            if answer == "redo":
                report.redone += 1
                say(f"take {take} dropped: recording it again")
                continue
            report.discarded += 1
        take += 1
    return report


def _keep(recorder: Any, keep: Callable[[Any], None], report: TakesReport, **how: Any) -> None:
    try:
        episode = recorder.stop(**how)
    except EpisodeAborted as exc:
        report.empty.append(str(exc))
        return
    keep(episode)
    report.kept.append(episode)


def _drop(recorder: Any) -> None:
    try:
        recorder.stop(success=None, stopped="discarded")
    except EpisodeAborted:
        pass
