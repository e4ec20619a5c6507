"""Is an evaluation held out? The instances it runs, against what each model trained on.

An evaluation's jobs are (task, seed) pairs: a suite's instances (``phoneloop tasks suites``)
or tasks x seeds. Each job is an *instance* with a content fingerprint
(``mockphone.tasks.instances``): built here by starting the job's phone, never taken from
the seed, so a seed that regenerates a trained instance is caught. A registered model's
training instances are the ``instances`` listed in the manifests of the dataset versions it
and every model it continued trained on (``datalake.tasksets.training_instances``).

``check`` raises :class:`EvalOverlap` naming the shared instances unless overlap is allowed,
and returns each policy's overlap count for the evals row: 0 for the oracle and random
baselines (they train on nothing), ``None`` for an endpoint or an unregistered checkpoint
(what it trained on is not known here).
"""

from __future__ import annotations

from typing import Iterable

from rollout.errors import RolloutError

Job = tuple[str, int]


class EvalOverlap(RolloutError):
    """Some evaluated instances are in a model's training data (the CLI exits 2)."""

    def __init__(self, policy: str, datasets: list[str], shared: dict[str, list[Job]]):
        self.policy, self.datasets, self.shared = policy, datasets, shared
        names = "; ".join(f"{fp} ({', '.join(f'{t} seed {s}' for t, s in jobs[:2])})"
                          for fp, jobs in sorted(shared.items())[:5])
        more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
        super().__init__(f"{policy} trained on {len(shared)} of the evaluated instance(s) (dataset "
                         f"{', '.join(datasets)}): {names}{more}. Evaluate on a suite disjoint from its training "
                         "data (phoneloop tasks suites), or pass --allow-overlap to run it anyway (recorded as "
                         "the overlap)")


class StaleSuite(RolloutError):
    """A suite instance no longer generates the content it was registered with (its template changed)."""


def job_fingerprints(jobs: Iterable[Job], locale: str) -> dict[Job, str]:
    """The instance fingerprint of every job, from the phone the job starts on."""
    from mockphone.tasks import instances, registry

    out: dict[Job, str] = {}
    for task, seed in jobs:
        if (task, seed) in out:
            continue
        phone, instance = instances.start(registry.get(task), seed, locale)
        try:
            out[(task, seed)] = instance.fingerprint(phone)
        finally:
            phone.close()
    return out


def suite_jobs(lake, ref: str) -> tuple[str, list[Job], str]:
    """(``name@vN``, its (template, seed) jobs, its locale) of evaluation suite ``ref``.

    Every instance is generated again and its fingerprint compared with the registered one: a suite
    whose templates changed since it was written raises :class:`StaleSuite` naming the instances."""
    from datalake import tasksets

    resolved = tasksets.resolve(lake, ref, "suite")
    rows = tasksets.read(lake, resolved, "suite")
    locales = sorted({r["locale"] for r in rows})
    if len(locales) != 1:
        raise RolloutError(f"suite {resolved} mixes locales {locales}: evaluate one locale at a time")
    jobs = [(r["template"], int(r["seed"])) for r in rows]
    now = job_fingerprints(jobs, locales[0])
    stale = [f"{r['template']} seed {r['seed']}" for r in rows if now[(r["template"], int(r["seed"]))] !=
             r["fingerprint"]]
    if stale:
        raise StaleSuite(f"suite {resolved}: {len(stale)} instance(s) no longer generate what was registered "
                         f"(their templates changed): {', '.join(stale[:5])}; write the suite again "
                         "(phoneloop tasks generate, then phoneloop tasks suites)")
    return resolved, jobs, locales[0]


def trained_on(lake, policy: str) -> tuple[list[str], set[str]] | None:
    """(datasets, instance fingerprints) a policy trained on; ``None`` when that is not known here."""
    from datalake import tasksets

    if policy == "oracle" or policy == "random" or policy.startswith("random:"):
        return [], set()
    if policy.startswith(("http://", "https://")):
        return None
    datasets, fps = tasksets.training_instances(lake, policy)
    return (datasets, fps) if datasets else None


def check(lake, policies: list[str], names: list[str], fingerprints: dict[Job, str], *,
          allow: bool = False) -> dict[str, int | None]:
    """Each policy's overlap (evaluated instances it trained on); :class:`EvalOverlap` unless ``allow``."""
    by_fp: dict[str, list[Job]] = {}
    for job, fp in fingerprints.items():
        by_fp.setdefault(fp, []).append(job)
    out: dict[str, int | None] = {}
    for policy, name in zip(policies, names):
        known = trained_on(lake, policy)
        if known is None:
            out[name] = None
            continue
        datasets, trained = known
        shared = {fp: jobs for fp, jobs in by_fp.items() if fp in trained}
        if shared and not allow:
            raise EvalOverlap(name, datasets, shared)
        out[name] = len(shared)
    return out
