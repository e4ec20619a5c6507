"""Precision and recall of ``curation.pii.find_pii`` per class on a labelled set.

A labelled value counts as found when a detected span of its class covers all of it;
a detected span that covers no labelled value of its class is a false positive.
The set is ``tests/curation/data/pii_labelled.jsonl`` (written by
``scripts/make_pii_labelled.py``); ``bench/pii_bench.py`` prints the table.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from curation.pii import KINDS, find_pii


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(rows: list[dict]) -> dict[str, dict]:
    """{kind: {tp, fp, fn, precision, recall}} plus "ALL", and the misses as examples."""
    tp, fp, fn = Counter(), Counter(), Counter()
    misses: list[tuple[str, str, str]] = []  # (what, kind, text)
    for row in rows:
        text = row["text"]
        gold = []
        for s in row["spans"]:
            start = text.index(s["value"])
            gold.append((start, start + len(s["value"]), s["kind"]))
        spans = find_pii(text)
        for start, end, kind in gold:
            if any(p.kind == kind and p.start <= start and p.end >= end for p in spans):
                tp[kind] += 1
            else:
                fn[kind] += 1
                misses.append(("missed", kind, text))
        for p in spans:
            if not any(p.kind == kind and p.start < end and p.end > start for start, end, kind in gold):
                fp[p.kind] += 1
                misses.append(("false", p.kind, f"{text} -> {text[p.start:p.end]!r}"))
    table = {}
    for kind in (*KINDS, "ALL"):
        t = sum(tp.values()) if kind == "ALL" else tp[kind]
        f_p = sum(fp.values()) if kind == "ALL" else fp[kind]
        f_n = sum(fn.values()) if kind == "ALL" else fn[kind]
        table[kind] = {"tp": t, "fp": f_p, "fn": f_n, "precision": t / (t + f_p) if t + f_p else 1.0,
                       "recall": t / (t + f_n) if t + f_n else 1.0}
    table["_misses"] = misses
    return table


def render(table: dict) -> str:
    lines = ["| class | labelled | found | false + | precision | recall |", "|---|---|---|---|---|---|"]
    for kind, r in table.items():
        if kind.startswith("_"):
            continue
        lines.append(f"| {kind} | {r['tp'] + r['fn']} | {r['tp']} | {r['fp']} | {r['precision']:.3f} | "
                     f"{r['recall']:.3f} |")
    return "\n".join(lines)
