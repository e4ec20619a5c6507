"""Measure the outcome judge (:mod:`phones.judge`) against the hidden state verifier.

Episodes are played on real-like phones (:mod:`mockphone.reallike`, in process so the verifier can
read the state afterwards): the oracle's (mostly successes), random ones (8 random taps, swipes and
keys, then ``terminate(success)``: failures), and every wrong-but-plausible ending the task
invariants know (``mockphone.tasks.invariants.wrong_endings``: truncated, side-effect, other-params,
second-answer, the task's own). The judge gets the final observation and the actions; the verifier
gets the phone. Precision = verified successes among the judge's successes; recall = the judge's
successes among verified successes (an ``unknown`` counts as not judged a success); coverage = the
share the judge decided.

Note: the invariants' ``truncated`` ending replays a stock phone's oracle coordinates, so on a
real-like phone it taps where the stock layout had the element (still a wrong ending).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from datalake.types import Action
from mockphone import reallike
from mockphone.errors import MockPhoneError
from mockphone.phone import MockPhone
from mockphone.tasks import invariants, registry
from mockphone.tasks.base import Task
from mockphone.tasks.oracle import solve
from phones.judge import JudgeTask, Verdict, family_of, judge

KINDS = ("oracle", "random", "wrong")


@dataclass(frozen=True)
class Row:
    template: str
    seed: int
    kind: str  # oracle | random | wrong:<ending>
    verified: bool  # the hidden verifier's verdict (score == 1.0)
    verdict: Verdict
    claimed: bool = False  # the episode ended with terminate(success): the agent's own claim


def record_actions(phone: MockPhone) -> list[Action]:
    """Make ``phone.act`` append every action it is given to the returned list (on this phone object only)."""
    taken: list[Action] = []
    act = phone.act

    def recording(action: Action):
        taken.append(action)
        return act(action)

    phone.act = recording  # type: ignore[method-assign]
    return taken


def random_actions(phone: MockPhone, rng: random.Random, n: int = 8) -> None:
    d = phone.display
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            a = Action("tap", x=rng.randrange(d.width), y=rng.randrange(d.status_h, d.height - d.nav_h))
        elif r < 0.8:
            a = Action("scroll", direction=rng.choice(["up", "down"]))
        else:
            a = Action("key", key=rng.choice(["back", "home"]))
        try:
            phone.act(a)
        except MockPhoneError:
            pass
    phone.act(Action("terminate", status="success"))


def play(cls: type[Task], seed: int, kind: str, player: Callable[[MockPhone, Task], None],
         perturbations: Any = reallike.PERTURBATIONS) -> Row | None:
    """One episode on a fresh real-like phone; None when the player crashed (the episode is not counted)."""
    phone = reallike.phone(seed, perturbations=perturbations)
    task = cls(seed=seed)
    task.initialize_task(phone)
    actions = record_actions(phone)
    try:
        player(phone, task)
    except (MockPhoneError, StopIteration):
        return None
    final = phone.observe()
    verdict = judge(JudgeTask.of(task, phone.locale), final, actions)
    last = next((a for a in reversed(actions) if a.type != "wait"), None)
    claimed = last is not None and last.type == "terminate" and last.status == "success"
    return Row(cls.name(), seed, kind, task.is_successful(phone) >= 1.0, verdict, claimed)


def measure(templates: Iterable[str], seeds: Sequence[int] = (0,), kinds: Sequence[str] = KINDS,
            perturbations: Any = reallike.PERTURBATIONS, max_wrong: int | None = None) -> list[Row]:
    rows: list[Row] = []
    for name in templates:
        cls = registry.get(name)
        for seed in seeds:
            players: list[tuple[str, Callable[[MockPhone, Task], None]]] = []
            if "oracle" in kinds:
                players.append(("oracle", lambda ph, t: solve(ph, t)))
            if "random" in kinds:
                players.append(("random", lambda ph, t, s=seed: random_actions(ph, random.Random(f"rand:{s}"))))
            if "wrong" in kinds:
                endings = list(invariants.wrong_endings(cls(seed=seed), seed).items())[:max_wrong]
                players += [(f"wrong:{n}", e) for n, e in endings]
            for kind, player in players:
                row = play(cls, seed, kind, player, perturbations)
                if row is not None:
                    rows.append(row)
    return rows


def scores(rows: Sequence[Row]) -> dict[str, float | int]:
    tp = sum(r.verified and r.verdict.outcome == "success" for r in rows)
    fp = sum(not r.verified and r.verdict.outcome == "success" for r in rows)
    pos = sum(r.verified for r in rows)
    tn = sum(not r.verified and r.verdict.outcome == "failure" for r in rows)
    fn_decided = sum(r.verified and r.verdict.outcome == "failure" for r in rows)
    decided = sum(r.verdict.outcome != "unknown" for r in rows)
    return {"episodes": len(rows), "verified": pos, "judged_success": tp + fp, "tp": tp, "fp": fp, "tn": tn,
            "fn_decided": fn_decided, "unknown": len(rows) - decided,
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / pos if pos else float("nan"),
            "coverage": decided / len(rows) if rows else float("nan")}


def table(rows: Sequence[Row]) -> dict[str, dict[str, float | int]]:
    """Scores per family, per episode kind, and overall (key ``all``)."""
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        groups[f"family:{family_of(r.template)}"].append(r)
        groups[f"kind:{r.kind.split(':')[0]}"].append(r)
    out = {k: scores(v) for k, v in sorted(groups.items())}
    out["all"] = scores(rows)
    return out


def render(tab: dict[str, dict[str, float | int]]) -> str:
    cols = ("episodes", "verified", "judged_success", "fp", "unknown", "precision", "recall", "coverage")
    lines = ["| group | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for name, s in tab.items():
        cells = [f"{s[c]:.2f}" if isinstance(s[c], float) else str(s[c]) for c in cols]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
