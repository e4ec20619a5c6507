"""Run a policy on phones and write the verified episodes back into the lake.

    report = rollout("./lake", RolloutSpec(policy="oracle", phones="mock:4", tasks="app:clock", episodes=2))

1. Jobs: every (task, seed) pair for the selected tasks, ``episodes`` seeds each, in one
   shared queue; one spawned worker process per phone takes the next job when it is free
   (``rollout.worker``); a run with one worker runs it in a thread of this process
   (``InProcessBackend``: no interpreter to start). ``mock:N`` makes N MockPhones; ``adb:S1,S2`` uses those serials
   through the adb server. A local checkpoint is loaded once, in this process, and served
   to the workers by a batching loopback endpoint (``rollout.model_server``).
2. Ids (``rollout.spec``): an episode's id is a hash of (run, policy, task, seed, attempt), under a
   ``rollout_id`` derived from ``RolloutSpec.run_id`` (the loop passes loop/round/stage).
   Writes skip ids already in the lake, and a rerun with the same ``run_id`` first skips
   every job whose episode is already there: a run killed at any point and run again ends
   with exactly the episodes of an uninterrupted one. Without a ``run_id`` each run is a
   new sample (a fresh random ``rollout_id``).
3. Faults: an endpoint's transient errors are retried inside the policy (backoff, jitter,
   ``options.retries``); when it still fails, the episode ends with
   ``failure_reason=policy_error`` and the steps it took, and the worker goes on. A phone
   that drops out records its episode as ``device_offline`` (excluded from success rates),
   its job goes back to the queue for another phone (at most ``attempts`` tries), and its
   worker stops. Workers write finished episodes in small batches as they finish, and die
   with this process (``PR_SET_PDEATHSIG``), so a kill loses only episodes in flight.
4. Outcomes come from the task verifiers on mock phones; on real phones they stay
   ``unknown`` until a human judges them. Episodes carry ``source=rollout``, the policy,
   the round, ``purpose`` (``eval`` for evaluations) and ``meta.rollout_id``.
"""

from __future__ import annotations

import queue as queue_module
import threading
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from datalake.lake import Lake
from rollout.errors import LakeWriteFailed, PhonesSpecError, PolicyError
from rollout.spec import RolloutSpec, jobs_for, parse_phones, policy_identity, rollout_id_for

JOIN_SECONDS = 60.0
WORKER = "rollout.worker:work"  # the worker every backend runs, one per phone


@dataclass
class RolloutReport:
    rollout_id: str
    episodes: int = 0  # finished episodes (device drop-outs not counted)
    outcomes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    quarantined: int = 0
    invalid_steps: int = 0
    skipped: int = 0  # jobs whose episode was already in the lake (a rerun)
    policy_errors: int = 0  # episodes ended by an endpoint that kept failing (failure_reason=policy_error)
    device_offline: int = 0  # episodes cut short by a phone that dropped out (retried elsewhere)
    retries: int = 0  # endpoint requests retried
    errors: list[str] = field(default_factory=list)  # jobs with no episode, workers that failed
    worker_deaths: int = 0  # workers (processes, Ray actors) that died without finishing
    unwritten: int = 0  # finished episodes a failed lake commit did not write (rollout() then raises)

    @property
    def success_rate(self) -> float:
        return self.outcomes.get("success", 0) / self.episodes if self.episodes else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "success_rate": self.success_rate}


def rollout(lake_uri: str, spec: RolloutSpec, *, progress: Callable[[RolloutReport], None] | None = None,
            adb_port: int | None = None) -> RolloutReport:
    kind, phones = parse_phones(spec.phones)
    _check_perturb(kind, spec.perturb)
    _check_locale(kind, spec.locale)
    jobs = jobs_for(spec)
    lake = Lake.open(lake_uri)  # fail here, not in every worker, when there is no lake
    lake.check_writable()
    if not is_builtin(spec.policy) and spec.backend == "ray":  # one Ray actor serves every phone actor
        return _rollout_served_on_ray(lake_uri, spec, len(phones), progress, adb_port)
    if not is_builtin(spec.policy):  # a local checkpoint: load it once here, serve the workers in batches
        server = _serve(lake_uri, spec.policy, len(phones))
        try:
            return rollout(lake_uri, replace(spec, policy=server.url, name=policy_identity(spec)),
                           progress=progress, adb_port=adb_port)
        finally:
            server.stop()
    report = RolloutReport(rollout_id=rollout_id_for(spec))
    todo = _remaining(lake, report, jobs) if spec.run_id else \
        [{"task": t, "seed": seed, "attempt": 1} for t, seed in jobs]  # a fresh rollout id: nothing to skip
    if todo:
        _run_workers(lake_uri, kind, phones, todo, spec, report, adb_port, progress)
    if report.unwritten:  # the lake refused episodes the policy finished: never a quiet success
        failures = "; ".join(e for e in report.errors if "lake write failed" in e)
        raise LakeWriteFailed(f"{report.unwritten} finished episode(s) could not be written to the lake "
                              f"({report.written} were): {failures[:1500]}; rerun with the same --run-id to "
                              "run only what the lake lacks", report)
    return report


def _rollout_served_on_ray(lake_uri, spec, phones: int, progress, adb_port) -> RolloutReport:
    """The checkpoint in one batching Ray actor (``rollout.served.serve_policy``) that
    every phone actor calls, on whichever node; the policy keeps its own name in the lake."""
    from fleet.backends import ray_connect
    from rollout.served import SERVED, serve_policy

    ray_connect(spec.address)  # connects (or starts) the cluster
    name = f"phoneloop-policy-{uuid.uuid4().hex[:12]}"
    try:
        actor = serve_policy(lake_uri, spec.policy, name, max_batch=phones)
    except Exception as exc:  # a missing, broken or half-written checkpoint: a clear policy error
        raise PolicyError(f"model {spec.policy!r} does not load: {type(exc).__name__}: {exc}"[:800]) from None
    try:
        return rollout(lake_uri, replace(spec, policy=SERVED + name, name=policy_identity(spec)),
                       progress=progress, adb_port=adb_port)
    finally:
        import ray

        ray.kill(actor)


def _serve(lake_uri: str, ref: str, phones: int):
    from rollout.model_server import ModelServer

    try:
        return ModelServer.load(lake_uri, ref, max_batch=phones).start()
    except Exception as exc:  # a missing, broken or half-written checkpoint: a clear policy error
        raise PolicyError(f"model {ref!r} does not load: {type(exc).__name__}: {exc}") from None


def _remaining(lake: Lake, report: RolloutReport, jobs: list[tuple[str, int]]) -> list[dict]:
    """Jobs not yet in the lake, each at its next attempt (after recorded drop-outs)."""
    rows = lake.sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed, failure_reason FROM episodes "
                    "WHERE json_extract_string(meta_json, '$.rollout_id') = ?", [report.rollout_id]).to_pylist()
    finished = {(r["task"], r["seed"]) for r in rows if r["failure_reason"] != "device_offline"}
    dropped: dict[tuple[str, int], int] = {}
    for r in rows:
        if r["failure_reason"] == "device_offline":
            dropped[(r["task"], r["seed"])] = dropped.get((r["task"], r["seed"]), 0) + 1
    report.skipped = sum(1 for job in jobs if job in finished)
    return [{"task": t, "seed": s, "attempt": dropped.get((t, s), 0) + 1} for t, s in jobs if (t, s) not in finished]


def _run_workers(lake_uri, kind, phones, todo, spec, report, adb_port, progress) -> None:
    """One scheduling loop for every backend: workers take jobs from one queue; a job whose
    phone dropped out goes back to the queue (next attempt); a worker that dies (a killed
    process, a lost Ray node) hands its job in flight back. Afterwards, any job whose
    episode is not in the lake (finished but unwritten on a dead worker) runs once more on
    the phones still alive."""
    from fleet.backends import make_backend

    backend = make_backend(spec.backend, spec.address, target=WORKER, run=report.rollout_id)
    if spec.backend == "local" and min(len(phones), len(todo)) == 1:
        backend = InProcessBackend(backend)
    live, died = _schedule(backend, lake_uri, kind, list(phones), todo, spec, report, adb_port, progress)
    if not died:
        return
    todo = _remaining(Lake.open(lake_uri), RolloutReport(rollout_id=report.rollout_id), jobs_for(spec))
    todo = [job for job in todo if job["attempt"] <= spec.attempts]
    if todo and live:
        report.errors.append(f"{len(todo)} job(s) had no episode in the lake after a worker died: run again")
        live, _ = _schedule(backend, lake_uri, kind, live, todo, spec, report, adb_port, progress)
    elif todo:
        report.errors.append(f"{len(todo)} job(s) not run: no phone left to run them")


def _schedule(backend, lake_uri, kind, phones, todo, spec, report, adb_port, progress) -> tuple[list[str], bool]:
    """Run ``todo`` on ``phones``; returns the phones still usable and whether a worker died.
    The scheduling is ``fleet.pool.Pool`` (shared with ``collect``); what follows is
    only what rollout messages mean."""
    from fleet.pool import Pool

    pool = Pool(backend, kind, list(phones), todo,
                (lake_uri, kind, asdict(spec), report.rollout_id, adb_port))

    def handle(message: dict) -> int:
        if message["kind"] == "offline" and message["job"]["attempt"] < spec.attempts and len(pool.usable) > 1:
            report.device_offline += 1  # recorded; the job goes to another phone
            pool.retire(message.get("phone"))
            pool.requeue({**message["job"], "attempt": message["job"]["attempt"] + 1})
            return 0
        if message["kind"] == "offline":
            pool.retire(message.get("phone"))
        return _absorb(report, message)

    def on_death(phone, _handle, job) -> None:
        report.worker_deaths += 1
        report.errors.append(f"{phone}: worker died" + (f" during {job['task']} seed {job['seed']}" if job else ""))

    left = pool.run(handle, on_death=on_death, progress=None if progress is None else lambda: progress(report))
    if left > 0:
        report.errors.append(f"{left} job(s) not run: no phone left to run them")
    return [phone for phone in phones if phone in pool.usable], report.worker_deaths > 0


class InProcessBackend:
    """One local worker: nothing runs in parallel, so it runs in a thread of this process
    (``rollout.worker.work`` unchanged) instead of a spawned one, which would first pay a
    new interpreter and its imports. Writes, messages and ids are the same; a kill of this
    process ends the worker with it, as ``PR_SET_PDEATHSIG`` does for a spawned one.
    A retry pass after a death (``_run_workers``) may still use the wrapped backend."""

    def __init__(self, backend: Any):
        self.backend = backend

    def queues(self):
        """Plain thread queues: no pickling, no feeder threads, no pipes."""
        return queue_module.Queue(), queue_module.Queue()

    def start(self, phone: str, kind: str, args: tuple) -> threading.Thread:
        from rollout.worker import work

        thread = threading.Thread(target=work, args=(phone, *args), kwargs={"in_process": True}, daemon=True,
                                  name=f"rollout-worker-{phone}")
        thread.start()
        return thread

    def dead(self, handle: threading.Thread) -> bool:
        return False  # work() ends only through its ``finally``, which always says "done"

    def join(self, handles: list) -> None:
        for thread in handles:
            thread.join(timeout=JOIN_SECONDS)  # it said "done": only its last statements are left


def _absorb(report: RolloutReport, message: dict) -> int:
    """Count one worker message into the report; 1 when it ends a job."""
    kind = message["kind"]
    if kind == "episode":
        report.episodes += 1
        report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
        report.invalid_steps += message["invalid_steps"]
        report.retries += message["retries"]
        report.policy_errors += message["failure_reason"] == "policy_error"
    elif kind == "offline":  # the last allowed attempt, or no other phone left
        report.device_offline += 1
        report.errors.append(f"{message['job']['task']} seed {message['job']['seed']}: {message['error']} "
                             f"(attempt {message['job']['attempt']}, no other phone to retry on)")
    elif kind == "written":
        report.written += message["written"]
        report.quarantined += message["quarantined"]
    elif kind in ("error", "noepisode"):
        report.errors.append(message["error"])
        report.unwritten += message.get("unwritten", 0)
    return int(kind in ("episode", "offline", "noepisode"))


def _check_locale(kind: str, locale: str) -> None:
    from mockphone.i18n import DEFAULT, check

    check(locale)  # a ValueError naming the locales
    if kind != "mock" and locale != DEFAULT:
        raise PhonesSpecError(f"--locale {locale} needs mock phones: a real phone has the locale it was set to")


def _check_perturb(kind: str, perturb: str) -> None:
    from mockphone.perturb import load_profile

    load_profile(perturb)  # an unknown profile lists the valid ones (BadPerturbationProfile, a ValueError)
    if kind != "mock" and perturb != "none":
        raise PhonesSpecError(f"--perturb {perturb} needs mock phones: real phones bring their own interruptions")


def is_builtin(policy: str) -> bool:
    """oracle, random[:SEED] and http(s) endpoints; anything else is a local checkpoint."""
    return policy in ("oracle", "random") or policy.startswith(("random:", "http://", "https://", "ray-actor:"))


def summary(lake: Lake, rollout_id: str) -> dict[str, Any]:
    """What the lake holds for one rollout (the same after a kill and a rerun as after one run)."""
    lake.invalidate()
    rows = lake.sql("SELECT episode_id, outcome, failure_reason FROM episodes "
                    "WHERE json_extract_string(meta_json, '$.rollout_id') = ? ORDER BY episode_id",
                    [rollout_id]).to_pylist()
    final = [r for r in rows if r["failure_reason"] != "device_offline"]
    outcomes: dict[str, int] = {}
    for r in final:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    return {"rollout_id": rollout_id, "episodes": len(final), "outcomes": outcomes,
            "policy_errors": sum(r["failure_reason"] == "policy_error" for r in final),
            "device_offline": len(rows) - len(final)}
