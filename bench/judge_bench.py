"""Judge benchmark: the rules-based outcome judge (``phones.judge``) against the hidden state verifier.

    .venv/bin/python bench/judge_bench.py [--quick] [--seeds 0-1] [--templates T1,T2]

Episodes on real-like phones (realish skin, real-like perturbations): the oracle's, random ones, and
every wrong ending the task invariants know (``rollout.judge_eval``). Prints precision, recall and
coverage per family, per episode kind and overall, and against a baseline measured on the same
episodes: "the episode ended with terminate(success)" (a model's own claim: the reward there is
without a judge; infeasible tasks' oracles end with terminate(infeasible), so the claim misses them).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollout import judge_eval  # noqa: E402
from phones.judge import Verdict, family_of  # noqa: E402
from mockphone.tasks import registry  # noqa: E402

QUICK = ("SettingsWifiOff", "SettingsBluetoothOn", "SettingsDarkThemeOn", "ContactsLookupNumber",
         "CalendarAnswerPlace", "MessagesSend", "MessagesReplyUnread", "NotesCreate", "ContactsAdd",
         "InfeasibleDeleteMissingNote", "InfeasibleImpossibleAlarm", "MailAnswerCode")


def sample(per_family: int) -> list[str]:
    """Up to ``per_family`` templates of each family (sorted by name), skipping safety and privacy."""
    out: dict[str, list[str]] = {}
    for name in sorted(registry._collect()):
        if name.startswith(("Safety", "Privacy")):
            continue
        out.setdefault(family_of(name), []).append(name)
    return [n for names in out.values() for n in names[:per_family]]


def claimed(rows: list[judge_eval.Row]) -> list[judge_eval.Row]:
    """The same episodes judged by the agent's claim alone (no final terminate(success): failure)."""
    return [replace(r, verdict=Verdict("success" if r.claimed else "failure", "claim", r.verdict.family))
            for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="12 templates, seed 0")
    ap.add_argument("--seeds", default="0", help="e.g. 0-1")
    ap.add_argument("--per-family", type=int, default=6)
    ap.add_argument("--templates", default="")
    args = ap.parse_args()
    a, _, b = args.seeds.partition("-")
    seeds = list(range(int(a), int(b or a) + 1))
    templates = (args.templates.split(",") if args.templates else list(QUICK) if args.quick
                 else sample(args.per_family))
    t0 = time.time()
    rows = judge_eval.measure(templates, seeds=seeds)
    wall = time.time() - t0
    print(f"{len(rows)} episodes, {len(templates)} templates x seeds {seeds}, {wall:.0f} s (machine may be shared)")
    print(judge_eval.render(judge_eval.table(rows)))
    base = judge_eval.scores(claimed(rows))
    ours = judge_eval.scores(rows)
    print(f"\nbaseline (the agent's claim): precision {base['precision']:.2f}, recall {base['recall']:.2f}")
    print(f"judge / baseline precision ratio: {ours['precision'] / base['precision']:.2f}x")
    print("\nfalse positives:")
    for r in rows:
        if r.verdict.outcome == "success" and not r.verified:
            print(f"  {r.template} seed {r.seed} {r.kind}: {r.verdict.reason}")


if __name__ == "__main__":
    main()
