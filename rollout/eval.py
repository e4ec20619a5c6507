"""Evaluation: several policies on the same tasks and seeds, success rates side by side.

Every policy runs the same (task, seed) jobs through ``rollout.runner.rollout``; its
episodes land in the lake with ``purpose=eval`` (no shipped recipe trains on them) and
``meta.eval_id``. The results are data: one row per policy in the lake's ``evals``
table with the policy's identity (``random:7``, ``endpoint:MODEL@HOST/PATH``, a
registered model and its checkpoint), the task set, seeds, per-episode results, a summary
per category and app (Wilson 95% intervals, every category of the selector shown even
when a policy has no result there), and paired comparisons with every other policy on
the episodes both ran (McNemar's exact test on the discordant pairs), and the boundary rates: every
safety, twin and privacy episode on mock phones is labelled (``mockphone.tasks.boundary``: its phone
replayed from the stored actions, the verifier reading the event log) and each policy gets
PhoneSafety-style safe / unsafe / useless rates and MyPhoneBench-style success / leak / over-share
rates with Wilson 95% intervals (``EvalReport.boundary``, the evals row's ``summary_json.boundary``,
each result's ``boundary`` label, a table in the markdown). Episodes cut short
by a phone that dropped out are left out of every rate. A policy that did not run gets a
row with ``status=failed`` and its error, and ``EvalReport.failed`` names it. A policy that ran
but has an episode missing for some job, or an episode ended by a policy error (an endpoint that
kept failing), is *partial*: its row has ``status=partial`` and the missing and errored jobs, and
``EvalReport.partial`` names them; ``phoneloop eval`` and the loop's eval stage fail on either
unless told ``--allow-partial`` (so 0/5 is never read as 0/6). The markdown
table and a bar chart are also written under ``<lake>/evals/<eval_id>/`` for reading.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from datalake import schema as S
from datalake.lake import Lake
from fleet.errors import FleetError
from rollout.errors import RolloutError
from rollout.runner import RolloutReport, rollout
from rollout.spec import RolloutSpec, jobs_for, policy_identity

RESULTS = """
SELECT policy, task, category, coalesce(app, '-') AS app, json_extract(meta_json, '$.seed')::INT AS seed,
       episode_id, outcome, score, failure_reason, json_extract_string(meta_json, '$.locale') AS locale
FROM episodes WHERE purpose = 'eval' AND json_extract_string(meta_json, '$.eval_id') = ?
  AND failure_reason IS DISTINCT FROM 'device_offline'
ORDER BY policy, task, seed
"""


@dataclass
class EvalReport:
    eval_id: str
    policies: list[str]
    by_category: dict[str, dict[str, dict]]  # group -> policy -> {n, successes, rate, low, high}
    by_app: dict[str, dict[str, dict]]
    comparisons: list[dict]
    markdown: str
    folder: str
    rollouts: dict[str, RolloutReport]
    failed: dict[str, str] = field(default_factory=dict)  # policy -> why it did not run
    overall: dict[str, dict] = field(default_factory=dict)  # policy -> {n, successes, rate, low, high}, every task
    suites: list[str] = field(default_factory=list)  # the suites (name@vN) the jobs came from, if any
    by_suite: dict[str, dict[str, dict]] = field(default_factory=dict)  # suite -> policy -> cell
    overlap: dict[str, int | None] = field(default_factory=dict)  # policy -> evaluated instances it trained on
    partial: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # policy -> {missing, policy_errors}
    boundary: dict[str, dict] = field(default_factory=dict)  # policy -> boundary.rates (safety, twin, privacy)

    def to_dict(self) -> dict:
        return {"eval_id": self.eval_id, "policies": self.policies, "by_category": self.by_category,
                "by_app": self.by_app, "overall": self.overall, "comparisons": self.comparisons, "failed": self.failed,
                "markdown": self.markdown, "folder": self.folder, "suites": self.suites, "by_suite": self.by_suite,
                "overlap": self.overlap, "partial": self.partial, "boundary": self.boundary,
                "rollouts": {p: r.to_dict() for p, r in self.rollouts.items()}}


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def evaluate(lake_uri: str, policies: list[str], spec: RolloutSpec,
             progress: Callable[[str, RolloutReport], None] | None = None, *, eval_id: str | None = None,
             name: str | None = None, loop: str | None = None, suites: list[str] | None = None,
             allow_overlap: bool = False) -> EvalReport:
    """Run ``spec`` (tasks, phones, episodes, options) once per policy, tabulate, record.

    ``suites`` (evaluation suites ``NAME[@vN]``) replace the spec's tasks and seeds by the suites'
    instances. Before anything runs, the instances are checked against what each registered model
    trained on (``rollout.heldout``): :class:`~rollout.heldout.EvalOverlap` names the shared ones
    unless ``allow_overlap``; each evals row records its suites and overlap count."""
    from rollout import heldout
    from rollout.spec import parse_phones

    eval_id = eval_id or uuid.uuid4().hex[:12]
    names = [policy_identity(replace(spec, policy=p, name=None)) for p in policies]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"policy listed twice: {', '.join(twice)}")
    lake = Lake.open(lake_uri)
    suite_of: dict[tuple[str, int], str] = {}
    resolved: list[str] = []
    if suites:
        locales = set()
        for ref in suites:
            full, jobs, locale = heldout.suite_jobs(lake, ref)
            resolved.append(full)
            locales.add(locale)
            for job in jobs:
                suite_of.setdefault(job, full)
        if len(locales) > 1:
            raise ValueError(f"suites {', '.join(resolved)} are of different locales {sorted(locales)}")
        spec = replace(spec, jobs=tuple(suite_of), locale=locales.pop(), tasks=",".join(resolved))
    fingerprints = heldout.job_fingerprints(jobs_for(spec), spec.locale) \
        if parse_phones(spec.phones)[0] == "mock" else {}
    overlap = heldout.check(lake, policies, names, fingerprints, allow=allow_overlap)
    rollouts, failed = {}, {}
    for policy, ident in zip(policies, names):
        run = replace(spec, policy=policy, name=None, purpose="eval", run_id=f"eval/{eval_id}",
                      meta={**spec.meta, "eval_id": eval_id})
        try:
            rollouts[ident] = report = rollout(lake_uri, run, progress=(lambda r, p=ident: progress(p, r))
                                               if progress else None)
        except (RolloutError, FleetError, OSError) as exc:
            failed[ident] = str(exc)
            continue
        if report.episodes == 0 and report.skipped == 0:
            failed[ident] = f"no episode recorded: {report.errors[0] if report.errors else 'no job ran'}"
    lake.invalidate()
    results = lake.sql(RESULTS, [eval_id]).to_pylist()
    if parse_phones(spec.phones)[0] == "mock":
        _label_boundary(lake, results, spec.perturb)
    boundary = {p: _boundary_rates([r for r in results if r["policy"] == p]) for p in names}
    categories = sorted({_category(task) for task, _ in jobs_for(spec)})
    by_category = _table(results, "category", names, categories)
    by_app = _table(results, "app", names, [])
    overall = _table([{**r, "all": "all"} for r in results], "all", names, ["all"])["all"]
    by_suite = _table([{**r, "suite": suite_of.get((r["task"], r["seed"]), "-")} for r in results], "suite", names,
                      resolved) if resolved else {}
    comparisons = paired(results, names)
    partial = {ident: gaps for ident, gaps in incomplete(results, names, jobs_for(spec)).items() if ident not in failed}
    markdown = render_markdown(names, by_category, by_app, comparisons, failed, overall, by_suite=by_suite,
                               held_out=_held_out_line(resolved, len(fingerprints), overlap), boundary=boundary)
    if partial:
        markdown += "\n" + "\n".join(f"- **{p} is partial**: {_gaps_line(g)}" for p, g in partial.items()) + "\n"
    folder = Path(lake.uri) / "evals" / eval_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(markdown, encoding="utf-8")
    _chart(names, by_category, folder / "chart.png")
    _record(lake, eval_id, name, loop, spec, policies, names, results, by_category, by_app, comparisons, failed,
            suite=",".join(resolved) or None, overlap=overlap, by_suite=by_suite, partial=partial,
            boundary=boundary)
    return EvalReport(eval_id, names, by_category, by_app, comparisons, markdown, str(folder), rollouts, failed,
                      overall, resolved, by_suite, overlap, partial, boundary)


def incomplete(results: list[dict], names: list[str], jobs: list[tuple[str, int]]) -> dict[str, dict[str, list[str]]]:
    """Per policy, the jobs (``task#seed``) it has no counted episode for and the episodes a policy
    error ended; policies with neither are left out. A job cut short by a phone that dropped out
    counts as missing: the policy's rate would otherwise be over fewer instances than the others'."""
    expected = sorted(set(jobs))
    out: dict[str, dict[str, list[str]]] = {}
    for ident in names:
        mine = [r for r in results if r["policy"] == ident]
        have = {(r["task"], r["seed"]) for r in mine}
        missing = [f"{task}#{seed}" for task, seed in expected if (task, seed) not in have]
        errors = [f"{r['task']}#{r['seed']}" for r in mine if r["failure_reason"] == "policy_error"]
        if missing or errors:
            out[ident] = {"missing": missing, "policy_errors": errors}
    return out


def _gaps_line(gaps: dict[str, list[str]], shown: int = 5) -> str:
    parts = []
    for key, label in (("missing", "no episode for"), ("policy_errors", "ended by a policy error")):
        jobs = gaps.get(key) or []
        if jobs:
            more = f" and {len(jobs) - shown} more" if len(jobs) > shown else ""
            parts.append(f"{len(jobs)} job(s) {label} ({', '.join(jobs[:shown])}{more})")
    return "; ".join(parts)


def partial_message(partial: dict[str, dict[str, list[str]]]) -> str:
    """One line naming each partial policy and its missing or errored jobs."""
    return "partial eval: " + "; ".join(f"{p}: {_gaps_line(g)}" for p, g in partial.items()) + \
        " (--allow-partial keeps such an eval)"


STEP_ACTIONS = "SELECT episode_id, action_json FROM steps WHERE episode_id IN ({}) ORDER BY episode_id, step_index"


def _label_boundary(lake: Lake, results: list[dict], perturb: str) -> None:
    """Give every safety, twin and privacy result its ``boundary`` label (its phone replayed from the lake)."""
    from datalake.types import Action
    from mockphone.tasks import boundary

    mine = [r for r in results if boundary.suite_of(r["task"]) is not None]
    if not mine:
        return
    rows = lake.sql(STEP_ACTIONS.format(",".join("?" * len(mine))), [r["episode_id"] for r in mine]).to_pylist()
    actions: dict[str, list] = {}
    for row in rows:
        actions.setdefault(row["episode_id"], []).append(Action.from_json(row["action_json"]))
    for r in mine:
        r["boundary"] = boundary.replay(r["task"], r["seed"], actions.get(r["episode_id"], []),
                                        locale=r.get("locale") or "en-US", perturb=perturb, score=r["score"])


def _boundary_rates(results: list[dict]) -> dict | None:
    from mockphone.tasks import boundary

    labels = [r["boundary"] for r in results if r.get("boundary")]
    return boundary.rates(labels) if labels else None


def _category(task: str) -> str:
    from mockphone.tasks import registry

    return registry.get(task).category


def _held_out_line(suites: list[str], instances: int, overlap: dict[str, int | None]) -> str:
    where = f"suite {', '.join(suites)}" if suites else "tasks x seeds"
    counts = ", ".join(f"{p} {'unknown' if n is None else n}" for p, n in overlap.items())
    return f"{where}: {instances} instance(s); overlap with each policy's training data: {counts}"


def _table(results: list[dict], group: str, names: list[str], groups: list[str]) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {g: {} for g in groups}
    for g in sorted({r[group] or "-" for r in results} | set(groups)):
        for p in names:
            mine = [r for r in results if r["policy"] == p and (r[group] or "-") == g]
            n, k = len(mine), sum(r["outcome"] == "success" for r in mine)
            low, high = wilson(k, n)
            out.setdefault(g, {})[p] = {"n": n, "successes": k, "rate": k / n if n else None, "low": low,
                                        "high": high}
    return out


def paired(results: list[dict], names: list[str]) -> list[dict]:
    """McNemar's exact test for every pair of policies, on the (task, seed) episodes both have."""
    from statsmodels.stats.contingency_tables import mcnemar

    won = {(r["policy"], r["task"], r["seed"]): r["outcome"] == "success" for r in results}
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            keys = sorted({(t, s) for p, t, s in won if p == a} & {(t, s) for p, t, s in won if p == b})
            cells = [[0, 0], [0, 0]]
            for t, s in keys:
                cells[int(not won[(a, t, s)])][int(not won[(b, t, s)])] += 1
            p_value = float(mcnemar(cells, exact=True).pvalue) if keys else None
            # rate_b - rate_a on the shared instances, with its bootstrap 95% interval (paired_difference)
            d = paired_difference({k: won[(a, *k)] for k in keys}, {k: won[(b, *k)] for k in keys})
            out.append({"a": a, "b": b, "pairs": len(keys), "both": cells[0][0], "only_a": cells[0][1],
                        "only_b": cells[1][0], "neither": cells[1][1],
                        "rate_a": (cells[0][0] + cells[0][1]) / len(keys) if keys else None,
                        "rate_b": (cells[0][0] + cells[1][0]) / len(keys) if keys else None,
                        "diff_b_minus_a": d["diff"], "low": d["low"], "high": d["high"],
                        "test": "mcnemar-exact", "p_value": p_value})
    return out


def paired_difference(a: dict[tuple[str, int], bool], b: dict[tuple[str, int], bool], resamples: int = 2000,
                      seed: int = 0) -> dict[str, Any]:
    """Success of ``b`` minus ``a`` over the (task, seed) instances both ran, with a percentile
    bootstrap 95% interval over those pairs (fixed seed: the same numbers on every run) and
    McNemar's exact p on the discordant pairs."""
    import random

    from statsmodels.stats.contingency_tables import mcnemar

    keys = sorted(set(a) & set(b))
    if not keys:
        return {"pairs": 0, "diff": None, "low": None, "high": None, "p_value": None}
    diffs = [float(b[k]) - float(a[k]) for k in keys]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(resamples))
    only_a, only_b = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    both = sum(a[k] and b[k] for k in keys)
    p_value = float(mcnemar([[both, only_a], [only_b, len(keys) - both - only_a - only_b]], exact=True).pvalue)
    return {"pairs": len(keys), "diff": sum(diffs) / len(diffs), "low": means[int(0.025 * resamples)],
            "high": means[int(0.975 * resamples) - 1], "only_a": only_a, "only_b": only_b, "p_value": p_value}


def _identity(lake: Lake, policy: str, ident: str, spec: RolloutSpec) -> dict[str, Any]:
    if policy.startswith(("http://", "https://")):
        return {"kind": "endpoint", "url": policy, "model": spec.options.model}
    if policy == "oracle" or policy == "random" or policy.startswith("random:"):
        return {"kind": "baseline", "name": policy, "seed": int(policy.partition(":")[2] or 0) if "random" in policy
                else None}
    rows = lake.sql("SELECT name, path, created_at, dataset_fingerprint FROM models WHERE name = ? "
                    "ORDER BY created_at DESC LIMIT 1", [policy]).to_pylist()
    if rows:
        return {"kind": "model", "name": ident, "registry_id": f"{rows[0]['name']}@{rows[0]['created_at'].isoformat()}",
                "path": rows[0]["path"], "dataset_fingerprint": rows[0]["dataset_fingerprint"]}
    return {"kind": "checkpoint", "path": policy}


def _profile(spec: RolloutSpec) -> str:
    """The perturbation profile the phones ran under, by the name the episodes record."""
    from mockphone.perturb import load_profile

    return spec.meta.get("perturbation") or load_profile(spec.perturb).name


def _record(lake, eval_id, name, loop, spec, policies, names, results, by_category, by_app, comparisons, failed, *,
            suite=None, overlap=None, by_suite=None, partial=None, boundary=None):
    """One ``evals`` row per policy; a rerun of the same eval_id adds nothing twice."""
    have = {r["policy"] for r in lake.sql("SELECT policy FROM evals WHERE eval_id = ?", [eval_id]).to_pylist()}
    seeds = sorted({seed for _, seed in jobs_for(spec)})
    options = {k: v for k, v in spec.options.__dict__.items() if k not in ("api_key", "headers")}
    rows = []
    for policy, ident in zip(policies, names):
        if ident in have:
            continue
        mine = [r for r in results if r["policy"] == ident]
        rows.append({
            "eval_id": eval_id, "name": name, "policy": ident,
            "policy_json": json.dumps({**_identity(lake, policy, ident, spec), "options": options}, default=str),
            "task_set": spec.tasks, "seeds_json": json.dumps(seeds), "perturbation": _profile(spec),
            "status": "failed" if ident in failed else "partial" if ident in (partial or {}) else "ok",
            "error": failed.get(ident) or (_gaps_line(partial[ident]) if ident in (partial or {}) else None),
            "episodes": len(mine), "successes": sum(r["outcome"] == "success" for r in mine),
            "results_json": json.dumps(mine, default=str),
            "summary_json": json.dumps({"by_category": {g: c.get(ident) for g, c in by_category.items()},
                                        "by_app": {g: c.get(ident) for g, c in by_app.items()},
                                        "by_suite": {g: c.get(ident) for g, c in (by_suite or {}).items()},
                                        "boundary": (boundary or {}).get(ident)}),
            "comparisons_json": json.dumps([c for c in comparisons if ident in (c["a"], c["b"])]),
            "round": spec.round, "loop": loop, "created_at": S.now(), "suite": suite,
            "overlap": (overlap or {}).get(ident)})
    if rows:
        lake.append("evals", rows)


def _cell(c: dict | None) -> str:
    if c is None or not c["n"]:
        return "- (n=0)"
    return f"{100 * c['rate']:.1f}% [{100 * c['low']:.0f}, {100 * c['high']:.0f}] (n={c['n']})"


def render_markdown(policies: list[str], by_category: dict, by_app: dict, comparisons: list[dict] = (),
                    failed: dict | None = None, overall: dict | None = None, *, by_suite: dict | None = None,
                    held_out: str | None = None, boundary: dict | None = None) -> str:
    """What was evaluated and its overlap with training, the suite table (when the jobs came from
    suites), the category and app tables (the category table ends with every task together: ``all``),
    then the paired comparisons and the policies that did not run."""
    lines = [held_out, ""] if held_out else []
    tables = ((("suite", by_suite),) if by_suite else ()) + (("category", by_category), ("app", by_app))
    for title, table in tables:
        lines += [f"| {title} | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
        for group in sorted(table):
            lines.append(f"| {group} | " + " | ".join(_cell(table[group].get(p)) for p in policies) + " |")
        if title == "category" and overall:
            lines.append("| **all** | " + " | ".join(_cell(overall.get(p)) for p in policies) + " |")
        lines.append("")
    if boundary and any(boundary.values()):
        lines += _boundary_table(policies, boundary)
    if comparisons:
        lines += ["| A vs B | pairs | only A | only B | McNemar p |", "|---|---|---|---|---|"]
        for c in comparisons:
            p = "-" if c["p_value"] is None else f"{c['p_value']:.3g}"
            lines.append(f"| {c['a']} vs {c['b']} | {c['pairs']} | {c['only_a']} | {c['only_b']} | {p} |")
        lines.append("")
    for policy, error in (failed or {}).items():
        lines.append(f"FAILED {policy}: {error}")
    return "\n".join(lines)


BOUNDARY_ROWS = (("safety", "safe", "safe (safety tasks)"), ("safety", "unsafe", "unsafe (safety tasks)"),
                 ("twin", "useless", "useless (harmless twins)"), ("privacy", "success", "success (privacy)"),
                 ("privacy", "leak", "leak (privacy)"), ("privacy", "overshare", "over-share (privacy)"))


def _boundary_table(policies: list[str], boundary: dict) -> list[str]:
    """PhoneSafety / MyPhoneBench rates, one row per rate, a column per policy."""
    lines = ["| boundary | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
    for suite, name, title in BOUNDARY_ROWS:
        cells = []
        for p in policies:
            c = ((boundary.get(p) or {}).get(suite) or {}).get(name)
            cells.append("- (n=0)" if not c or not c["n"] else
                         f"{100 * c['rate']:.1f}% [{100 * c['low']:.0f}, {100 * c['high']:.0f}] (n={c['n']})")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines + [""]


def _chart(policies: list[str], by_category: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted(by_category)
    width = 0.8 / max(1, len(policies))
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(groups), 3.2))
    for k, p in enumerate(policies):
        cells = [by_category[g].get(p) or {"rate": None, "low": 0, "high": 0} for g in groups]
        rates = [100 * (c["rate"] or 0.0) for c in cells]
        errors = [[max(0.0, 100 * ((c["rate"] or 0) - c["low"])) if c["rate"] is not None else 0 for c in cells],
                  [max(0.0, 100 * (c["high"] - (c["rate"] or 0))) if c["rate"] is not None else 0 for c in cells]]
        ax.bar([i + k * width for i in range(len(groups))], rates, width, yerr=errors, capsize=3, label=p)
    ax.set_xticks([i + width * (len(policies) - 1) / 2 for i in range(len(groups))], groups)
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
