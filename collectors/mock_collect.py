"""`phoneloop collect mock`: oracle demonstrations on mock phones, over spawned workers, written as they finish.

    report = collect_mock("./lake", MockCollectSpec(tasks="app:shop", episodes=40, workers=2,
                                                    noise=0.2, detours=0.3, perturb="real-like"))

1. Jobs: ``episodes`` (task, seed) pairs cycling over the selected tasks; job ``i`` runs
   task ``i mod T`` with seed ``seed + i div T``. Task parameters, the phone's app data
   and its perturbations all derive from that seed.
2. Workers: ``workers`` phone slots — spawned processes, or with ``backend="ray"`` one
   Ray actor each (``fleet.backends``; the same ``fleet.pool.Pool`` schedules rollouts) — pull
   jobs from one queue. Each plans the episode's noise and detours by rehearsing it on a
   scratch phone (``collectors.human``), records it on its own MockPhone, and writes its
   finished episodes to the lake every ``batch`` episodes or ``flush_s`` seconds (one
   commit each), so a kill loses at most the unwritten ones. A process whose parent is
   gone stops.
3. The parent streams progress. A worker that dies is reported with the task and seed it
   was running; that job goes back to the queue, and after the pass every job whose
   episode is not in the lake (finished but unwritten on the dead worker) runs once more
   on the workers still alive. Episode ids are content hashes of a deterministic
   recording, so a rerun writes nothing twice (``skipped``).
4. The queues live in a manager process (``fleet.backends.LocalBackend``). When it dies,
   each worker writes the episodes it finished and stops, and the parent starts a fresh
   pool (and manager) on the same slots for every job the lake lacks (``RERUNS`` times at
   most); the lake ends with every job's episode, once.

Episodes carry ``source=oracle``, device kind ``mock``, ``meta.phone="mock"``,
``meta.seed``, ``meta.perturbation`` (profile and seed), the noise and detour rates,
and ``meta.detour_steps`` / ``meta.noise_steps``: the indices of the steps that are a
detour (mistake + recovery) or human noise (pauses, the first burst of split typing).
Each step says the same in its own meta: ``label`` (oracle | detour | noise) and, for
detour steps, ``detour_kind`` (so ``steps.meta_json`` can be filtered in SQL).
"""

from __future__ import annotations

import os
import queue as queue_module
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from collectors.human import HumanOracle, plan_variant
from datalake.lake import Lake
from fleet.backends import QUEUE_LOST
from fleet.errors import QueuesLost
from phones.episode import run_episode
from phones.errors import PhoneError

WORKER = "collectors.mock_collect:work"

ORACLE_MAX_STEPS = 300  # the oracle ends its own episodes; this only guards against a stuck one
RERUNS = 3  # passes after the first for jobs the lake lacks (a worker or the queue manager died)


@dataclass(frozen=True)
class MockCollectSpec:
    tasks: str  # a mockphone task selector, e.g. "app:shop" or "category:mini-app"
    episodes: int  # episodes in all, cycling over the selected tasks
    workers: int = 1  # spawned worker processes (at most the CPU count)
    noise: float = 0.0  # share of oracle actions done like a human (jittered tap, pause, split typing)
    detours: float = 0.0  # share of episodes with one recoverable mistake
    perturb: str = "none"  # perturbation profile: none, light, real-like, heavy, or a YAML path
    seed: int = 0  # first seed
    locale: str = "en-US"  # the phones' locale (en-US, zh-CN): screens and instructions, recorded as meta.locale
    backend: str = "local"  # local (spawned processes) | ray (one Ray actor per phone slot), see fleet.backends
    address: str | None = None  # Ray cluster address (auto, HOST:PORT, ray://HOST:PORT); None starts a local one
    batch: int = 8  # episodes per lake commit from a worker
    flush_s: float = 5.0  # ... or sooner, once this many seconds passed since its last commit

    def check(self) -> None:
        """Raise ValueError naming the bad field before anything starts."""
        from mockphone.perturb import load_profile

        if self.episodes < 1:
            raise ValueError(f"--episodes must be at least 1, got {self.episodes}")
        from fleet.backends import check_backend
        from fleet.errors import BadBackend

        try:
            check_backend(self.backend, self.address)
        except BadBackend as exc:
            raise ValueError(str(exc)) from None
        cores = os.cpu_count() or 1
        if self.workers < 1 or (self.backend == "local" and self.workers > cores):
            raise ValueError(f"--workers must be between 1 and the {cores} CPU core(s) here, got {self.workers}")
        for name in ("noise", "detours"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"--{name} must be in [0, 1], got {getattr(self, name)}")
        if self.batch < 1:
            raise ValueError(f"batch must be at least 1, got {self.batch}")
        load_profile(self.perturb)  # BadPerturbationProfile (a ValueError) lists the valid profiles
        from mockphone.i18n import check as check_locale

        check_locale(self.locale)  # a ValueError naming the locales


@dataclass
class MockCollectReport:
    episodes: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    skipped: int = 0
    quarantined: int = 0
    detoured: int = 0
    errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    workers: dict[int, int] = field(default_factory=dict)  # worker index -> pid (for tests and operators)
    running: dict[int, tuple[str, int] | None] = field(default_factory=dict)  # worker -> (task, seed) it runs

    @property
    def success_rate(self) -> float:
        return self.outcomes.get("success", 0) / self.episodes if self.episodes else 0.0

    @property
    def episodes_per_s(self) -> float:
        return self.episodes / self.elapsed_s if self.elapsed_s else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "success_rate": self.success_rate, "episodes_per_s": round(self.episodes_per_s, 3)}


def jobs_for(spec: MockCollectSpec) -> list[tuple[str, int]]:
    from mockphone.tasks import registry

    from mockphone.errors import UnknownTask

    try:
        names = [cls.name() for cls in registry.select(spec.tasks)]
    except UnknownTask as exc:
        names, problem = [], str(exc)
    else:
        problem = f"task selector {spec.tasks!r} matches no task"
    if not names:
        apps = sorted({a for cls in registry.REGISTRY.values() for a in cls.app_names})
        categories = sorted({cls.category for cls in registry.REGISTRY.values()})
        raise ValueError(f"{problem} (apps: {', '.join(apps)}; categories: {', '.join(categories)}; "
                         "or a task name or glob)")
    return [(names[i % len(names)], spec.seed + i // len(names)) for i in range(spec.episodes)]


def collect_mock(lake_uri: str, spec: MockCollectSpec, *,
                 progress: Callable[[MockCollectReport], None] | None = None) -> MockCollectReport:
    """Run every job over ``spec.workers`` workers (spawned processes or Ray actors); see the module docstring."""
    from fleet.backends import make_backend

    spec.check()
    jobs = [{"task": t, "seed": s} for t, s in jobs_for(spec)]
    lake = Lake.open(lake_uri)  # fail here, not in every worker, when there is no lake
    report = MockCollectReport()
    start = time.perf_counter()
    backend = make_backend(spec.backend, spec.address, target=WORKER)
    live, todo = list(range(spec.workers)), jobs
    for _ in range(1 + RERUNS):
        try:
            died = _pass(backend, lake_uri, spec, live, todo, report, start, progress)
            if not died:
                break
            live = [w for w in live if w not in died]
            why = "a worker died"
        except QueuesLost as exc:  # every worker stopped with it: a fresh pool (and manager) on the same slots
            report.errors.append(f"{exc}; its workers wrote what they had finished (not counted in written) "
                                 "and stopped")
            why = "the queue manager died"
        todo = _missing(lake, jobs)  # episodes a dead worker finished but had not written, jobs never run
        if not todo:
            break
        if not live:
            report.errors.append(f"{len(todo)} job(s) not run: no worker left")
            break
        report.errors.append(f"{len(todo)} job(s) had no episode in the lake after {why}: run again")
    report.elapsed_s = time.perf_counter() - start
    return report


def _pass(backend, lake_uri: str, spec: MockCollectSpec, workers: list[int], jobs: list[dict],
          report: MockCollectReport, start: float, progress) -> set[int]:
    """One pass of ``jobs`` over ``workers`` (``fleet.pool.Pool``: the rollout's scheduling);
    returns the workers that died."""
    from fleet.pool import Pool

    pool = Pool(backend, "mock", workers, jobs, (lake_uri, asdict(spec)))
    report.workers.update({w: h.pid for w, h in pool.workers.items() if hasattr(h, "pid")})
    died: set[int] = set()

    def on_death(worker, handle, job) -> None:
        died.add(worker)
        where = f" while running {job['task']} seed {job['seed']}" if job else ""
        how = f" (pid {handle.pid}) died with exit code {handle.exitcode}" if hasattr(handle, "pid") else " died"
        report.errors.append(f"worker {worker}{how}{where}; its job moves to another worker, its written "
                             "episodes are kept")

    def tick() -> None:
        report.running.update({w: (j["task"], j["seed"]) if j else None for w, j in pool.in_flight.items()})
        report.elapsed_s = time.perf_counter() - start
        if progress is not None:
            progress(report)

    left = pool.run(lambda message: _absorb(report, message), on_death=on_death, progress=tick)
    if left:
        report.errors.append(f"{left} job(s) not run: no worker left")
    return died


def _missing(lake: Lake, jobs: list[dict]) -> list[dict]:
    """Jobs with no oracle mock episode for their (task, seed) in the lake."""
    lake.invalidate()
    rows = lake.sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed FROM episodes "
                    "WHERE source = 'oracle' AND json_extract_string(meta_json, '$.phone') = 'mock'").to_pylist()
    have = {(r["task"], r["seed"]) for r in rows}
    return [job for job in jobs if (job["task"], job["seed"]) not in have]


def _absorb(report: MockCollectReport, message: dict) -> int:
    """Count one worker message into the report; 1 when it ends a job."""
    kind = message["kind"]
    if kind == "episode":
        report.episodes += 1
        report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
        report.detoured += int(message["detoured"])
    elif kind == "written":
        report.written += message["written"]
        report.skipped += message["skipped"]
        report.quarantined += message["quarantined"]
        report.errors.extend(message["reasons"])
    elif kind == "error":
        report.errors.append(message["error"])
    return int(kind == "episode" or (kind == "error" and message.get("job") is not None))


def work(worker: int, lake_uri: str, spec_dict: dict, todo, results, parent: int | None = None) -> None:
    """One worker's main loop (a spawned process or a Ray actor): jobs in, episodes to the lake in batches."""
    from mockphone.perturb import load_profile
    from mockphone.phone import MockPhone

    spec = MockCollectSpec(**spec_dict)
    profile = load_profile(spec.perturb)
    lake = Lake.open(lake_uri)
    phone = MockPhone(perturbations=profile, locale=spec.locale)
    batch: list = []
    last = time.monotonic()
    lost = False
    try:
        while parent is None or os.getppid() == parent:  # an orphaned process stops
            try:
                job = todo.get(timeout=1.0)
            except queue_module.Empty:
                continue
            if job is None:
                break
            results.put({"kind": "started", "phone": worker, "job": job})
            try:
                episode = _one(phone, lambda: MockPhone(perturbations=profile, locale=spec.locale), job, spec, worker, results)
            except QUEUE_LOST:
                raise
            except Exception as exc:  # noqa: BLE001  one broken task must not cost the other episodes
                results.put({"kind": "error", "phone": worker, "job": job,
                             "error": f"{job['task']} seed {job['seed']}: crashed: {type(exc).__name__}: {exc}"})
                phone = MockPhone(perturbations=profile, locale=spec.locale)
                continue
            if episode is not None:
                batch.append(episode)
            if len(batch) >= spec.batch or (batch and time.monotonic() - last >= spec.flush_s):
                _flush(lake, batch, worker, results)
                last = time.monotonic()
        _flush(lake, batch, worker, results)
    except QUEUE_LOST:  # the queues' manager process is gone: keep what is finished and stop; the parent
        lost = True  # reruns, on a fresh pool, what the lake lacks (content-hashed ids: nothing twice)
        _flush(lake, batch, worker, None)
    finally:
        if not lost:
            results.put({"kind": "done", "phone": worker})


def _one(phone, make_phone, job: dict, spec: MockCollectSpec, index: int, results):
    from mockphone.errors import MockPhoneError
    from mockphone.tasks import registry

    name, seed = job["task"], job["seed"]
    cls = registry.get(name)
    try:
        plan = plan_variant(make_phone, cls, seed, noise=spec.noise, detours=spec.detours,
                            max_steps=ORACLE_MAX_STEPS)
        task = cls(seed=seed, locale=spec.locale)
        policy = HumanOracle(phone, task, seed=seed, **plan)
        meta = {"phone": "mock", "worker": index, "noise": spec.noise, "detours": spec.detours}
        episode = run_episode(phone, policy, task, seed=seed, max_steps=ORACLE_MAX_STEPS, meta=meta)
    except (PhoneError, MockPhoneError) as exc:
        results.put({"kind": "error", "phone": index, "job": job,
                     "error": f"{name} seed {seed}: {type(exc).__name__}: {exc}"})
        return None
    labels = {"detour_steps": policy.steps_labelled("detour"), "noise_steps": policy.steps_labelled("noise")}
    if policy.detour_kind is not None:
        labels["detour_kind"] = policy.detour_kind
    detour, noise = set(labels["detour_steps"]), set(labels["noise_steps"])
    steps = tuple(replace(step, meta={**step.meta, "label": "detour" if i in detour else "noise" if i in noise
                                      else "oracle", **({"detour_kind": policy.detour_kind} if i in detour else {})})
                  for i, step in enumerate(episode.steps))
    episode = replace(episode, steps=steps, meta={**episode.meta, **labels})
    results.put({"kind": "episode", "phone": index, "job": job, "outcome": episode.outcome,
                 "detoured": bool(labels["detour_steps"])})
    return episode


def _flush(lake: Lake, batch: list, index: int, results) -> None:
    """Write the batch in one commit; tell ``results`` (None: there is nobody to tell)."""
    if batch:
        written = lake.write_episodes(batch, origin="collect")
        if results is not None:
            results.put({"kind": "written", "phone": index, "written": written.written,
                         "skipped": written.skipped, "quarantined": written.quarantined,
                         "reasons": list(written.reasons)})
        batch.clear()
