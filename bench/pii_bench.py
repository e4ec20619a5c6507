"""Precision / recall of the PII detectors per class on the committed labelled set.

    .venv/bin/python bench/pii_bench.py          # the table, then every miss
"""

from __future__ import annotations

from pathlib import Path

from curation.pii_eval import evaluate, load, render

DATA = Path(__file__).resolve().parent.parent / "tests" / "curation" / "data" / "pii_labelled.jsonl"


def main() -> None:
    rows = load(DATA)
    table = evaluate(rows)
    langs = {lang: sum(r["lang"] == lang for r in rows) for lang in ("en", "zh")}
    print(f"{len(rows)} labelled strings ({langs['en']} en, {langs['zh']} zh; "
          f"{sum(not r['spans'] for r in rows)} without PII)")
    print(render(table))
    for what, kind, text in table["_misses"]:
        print(f"  {what:<6} {kind:<8} {text}")


if __name__ == "__main__":
    main()
