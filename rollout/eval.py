"""Evaluation: several policies on the same tasks and seeds, success rates side by side.

Every policy runs the same (task, seed) jobs through ``rollout.runner.rollout``; the
episodes land in the lake with ``meta.eval_id``, so the table is a query over the lake
and can be recomputed later. Rates come with Wilson 95% intervals, per category
(single-app, cross-app, mini-app) and per app, in the shape of the tables in phone-agent
papers; the markdown table, a bar chart (PNG) and the raw numbers (JSON) are saved
under ``<lake>/evals/<eval_id>/``.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from datalake.lake import Lake
from rollout.runner import RolloutReport, RolloutSpec, rollout

QUERY = """
SELECT policy, coalesce({group}, '-') AS grp, count(*) AS n,
       sum(CASE WHEN outcome = 'success' THEN 1 ELSE 0 END)::BIGINT AS successes
FROM episodes WHERE json_extract_string(meta_json, '$.eval_id') = ?
GROUP BY ALL ORDER BY grp, policy
"""


@dataclass
class EvalReport:
    eval_id: str
    policies: list[str]
    by_category: dict[str, dict[str, dict]]  # group -> policy -> {n, successes, rate, low, high}
    by_app: dict[str, dict[str, dict]]
    markdown: str
    folder: str
    rollouts: dict[str, RolloutReport]

    def to_dict(self) -> dict:
        return {"eval_id": self.eval_id, "policies": self.policies, "by_category": self.by_category,
                "by_app": self.by_app, "markdown": self.markdown, "folder": self.folder,
                "rollouts": {p: {"episodes": r.episodes, "outcomes": r.outcomes, "errors": r.errors}
                             for p, r in self.rollouts.items()}}


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def evaluate(lake_uri: str, policies: list[str], spec: RolloutSpec,
             progress: Callable[[str, RolloutReport], None] | None = None) -> EvalReport:
    """Run ``spec`` (tasks, phones, episodes, options) once per policy and tabulate."""
    eval_id = uuid.uuid4().hex[:12]
    names = [p if not p.startswith(("http://", "https://")) else f"endpoint:{spec.options.model}" for p in policies]
    rollouts = {}
    for policy in policies:
        run = replace(spec, policy=policy, meta={**spec.meta, "eval_id": eval_id})
        rollouts[policy] = rollout(lake_uri, run, progress=(lambda r, p=policy: progress(p, r)) if progress else None)
    lake = Lake.open(lake_uri)
    by_category = _table(lake, "category", eval_id)
    by_app = _table(lake, "app", eval_id)
    markdown = render_markdown(names, by_category, by_app)
    folder = Path(lake.uri) / "evals" / eval_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(markdown, encoding="utf-8")
    (folder / "results.json").write_text(json.dumps({"by_category": by_category, "by_app": by_app}, indent=2))
    _chart(names, by_category, folder / "chart.png")
    return EvalReport(eval_id, names, by_category, by_app, markdown, str(folder), rollouts)


def _table(lake: Lake, group: str, eval_id: str) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for row in lake.sql(QUERY.format(group=group), [eval_id]).to_pylist():
        low, high = wilson(row["successes"], row["n"])
        out.setdefault(row["grp"], {})[row["policy"]] = {
            "n": row["n"], "successes": row["successes"], "rate": row["successes"] / row["n"], "low": low,
            "high": high}
    return out


def render_markdown(policies: list[str], by_category: dict, by_app: dict) -> str:
    lines = []
    for title, table in (("category", by_category), ("app", by_app)):
        lines += [f"| {title} | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
        for group in sorted(table):
            cells = []
            for p in policies:
                c = table[group].get(p)
                cells.append("-" if c is None else
                             f"{100 * c['rate']:.1f}% [{100 * c['low']:.0f}, {100 * c['high']:.0f}] (n={c['n']})")
            lines.append(f"| {group} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _chart(policies: list[str], by_category: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted(by_category)
    width = 0.8 / max(1, len(policies))
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(groups), 3.2))
    for k, p in enumerate(policies):
        rates = [by_category[g].get(p, {}).get("rate", 0.0) * 100 for g in groups]
        errors = [[(by_category[g].get(p, {}).get("rate", 0) - by_category[g].get(p, {}).get("low", 0)) * 100
                   for g in groups],
                  [(by_category[g].get(p, {}).get("high", 0) - by_category[g].get(p, {}).get("rate", 0)) * 100
                   for g in groups]]
        ax.bar([i + k * width for i in range(len(groups))], rates, width, yerr=errors, capsize=3, label=p)
    ax.set_xticks([i + width * (len(policies) - 1) / 2 for i in range(len(groups))], groups)
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
