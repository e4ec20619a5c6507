"""`phoneloop collect mock`: oracle demonstrations on mock phones, over spawned workers, written as they finish.

    report = collect_mock("./lake", MockCollectSpec(tasks="app:shop", episodes=40, workers=2,
                                                    noise=0.2, detours=0.3, perturb="real-like"))

1. Jobs: ``episodes`` (task, seed) pairs cycling over the selected tasks; job ``i`` runs
   task ``i mod T`` with seed ``seed + i div T``. Task parameters, the phone's app data
   and its perturbations all derive from that seed.
2. Workers: ``workers`` spawned processes pull jobs from one queue. Each plans the
   episode's noise and detours by rehearsing it on a scratch phone
   (``collectors.human``), records it on its own MockPhone, and writes its finished
   episodes to the lake every ``batch`` episodes or ``flush_s`` seconds (one commit
   each), so a kill loses at most the unwritten ones. A worker whose parent is gone stops.
3. The parent streams progress, and reports a worker that dies with the task and seed
   it was running; the other workers' episodes are kept.

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

from collectors.errors import CollectorError, EpisodeAborted
from collectors.human import HumanOracle, plan_variant
from collectors.loop import run_episode
from datalake.lake import Lake, spawn_context

ORACLE_MAX_STEPS = 300  # the oracle ends its own episodes; this only guards against a stuck one


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
    batch: int = 8  # episodes per lake commit from a worker
    flush_s: float = 5.0  # ... or sooner, once this many seconds passed since its last commit

    def check(self) -> None:
        """Raise ValueError naming the bad field before anything starts."""
        from mockphone.perturb import load_profile

        if self.episodes < 1:
            raise ValueError(f"--episodes must be at least 1, got {self.episodes}")
        cores = os.cpu_count() or 1
        if not 1 <= self.workers <= cores:
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
    """Run every job over ``spec.workers`` spawned workers; see the module docstring."""
    spec.check()
    jobs = jobs_for(spec)
    Lake.open(lake_uri)  # fail here, not in every worker, when there is no lake
    ctx = spawn_context()
    todo, results = ctx.Queue(), ctx.Queue()
    for job in jobs:
        todo.put(job)
    for _ in range(spec.workers):
        todo.put(None)
    report = MockCollectReport()
    start = time.perf_counter()
    workers = [ctx.Process(target=_worker, args=(lake_uri, asdict(spec), w, os.getpid(), todo, results), daemon=True)
               for w in range(spec.workers)]
    for w in workers:
        w.start()
    report.workers = {i: w.pid for i, w in enumerate(workers)}
    running = report.running
    finished: set[int] = set()
    while len(finished) < len(workers):
        try:
            message = results.get(timeout=0.5)
        except queue_module.Empty:
            _check_dead(workers, finished, running, report)
            continue
        _absorb(report, message, running, finished)
        report.elapsed_s = time.perf_counter() - start
        if progress is not None:
            progress(report)
    for w in workers:
        w.join()
    report.elapsed_s = time.perf_counter() - start
    return report


def _absorb(report: MockCollectReport, message: dict, running: dict, finished: set) -> None:
    kind, worker = message["kind"], message["worker"]
    if kind == "start":
        running[worker] = (message["task"], message["seed"])
    elif kind == "episode":
        running[worker] = None
        report.episodes += 1
        report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
        report.detoured += int(message["detoured"])
    elif kind == "written":
        report.written += message["written"]
        report.skipped += message["skipped"]
        report.quarantined += message["quarantined"]
        report.errors.extend(message["reasons"])
    elif kind == "error":
        running[worker] = None
        report.errors.append(message["error"])
    elif kind == "done":
        finished.add(worker)


def _check_dead(workers: list, finished: set, running: dict, report: MockCollectReport) -> None:
    for i, w in enumerate(workers):
        if i not in finished and not w.is_alive():
            finished.add(i)
            job = running.get(i)
            where = f" while running {job[0]} seed {job[1]}" if job else ""
            report.errors.append(f"worker {i} (pid {w.pid}) died with exit code {w.exitcode}{where}; "
                                 "its unwritten episodes are lost, the other workers' are kept")


def _worker(lake_uri: str, spec_dict: dict, index: int, parent: int, todo, results) -> None:
    from mockphone.phone import MockPhone
    from mockphone.perturb import load_profile

    spec = MockCollectSpec(**spec_dict)
    profile = load_profile(spec.perturb)
    lake = Lake.open(lake_uri)
    phone = MockPhone(perturbations=profile, locale=spec.locale)
    batch: list = []
    last = time.monotonic()
    try:
        while os.getppid() == parent:  # an orphaned worker stops
            job = todo.get()
            if job is None:
                break
            results.put({"kind": "start", "worker": index, "task": job[0], "seed": job[1]})
            try:
                episode = _one(phone, lambda: MockPhone(perturbations=profile, locale=spec.locale), job, spec, index,
                               results)
            except Exception as exc:  # noqa: BLE001  one broken task must not cost the other episodes
                results.put({"kind": "error", "worker": index,
                             "error": f"{job[0]} seed {job[1]}: crashed: {type(exc).__name__}: {exc}"})
                phone = MockPhone(perturbations=profile, locale=spec.locale)
                continue
            if episode is not None:
                batch.append(episode)
            if len(batch) >= spec.batch or (batch and time.monotonic() - last >= spec.flush_s):
                _flush(lake, batch, index, results)
                last = time.monotonic()
        _flush(lake, batch, index, results)
    finally:
        results.put({"kind": "done", "worker": index})


def _one(phone, make_phone, job: tuple[str, int], spec: MockCollectSpec, index: int, results):
    from mockphone.errors import MockPhoneError
    from mockphone.tasks import registry

    name, seed = job
    cls = registry.get(name)
    try:
        plan = plan_variant(make_phone, cls, seed, noise=spec.noise, detours=spec.detours,
                            max_steps=ORACLE_MAX_STEPS)
        task = cls(seed=seed, locale=spec.locale)
        policy = HumanOracle(phone, task, seed=seed, **plan)
        meta = {"phone": "mock", "worker": index, "noise": spec.noise, "detours": spec.detours}
        episode = run_episode(phone, policy, task, seed=seed, max_steps=ORACLE_MAX_STEPS, meta=meta)
    except (CollectorError, EpisodeAborted, MockPhoneError) as exc:
        results.put({"kind": "error", "worker": index, "error": f"{name} seed {seed}: {type(exc).__name__}: {exc}"})
        return None
    labels = {"detour_steps": policy.steps_labelled("detour"), "noise_steps": policy.steps_labelled("noise")}
    if policy.detour_kind is not None:
        labels["detour_kind"] = policy.detour_kind
    detour, noise = set(labels["detour_steps"]), set(labels["noise_steps"])
    steps = tuple(replace(step, meta={**step.meta, "label": "detour" if i in detour else "noise" if i in noise
                                      else "oracle", **({"detour_kind": policy.detour_kind} if i in detour else {})})
                  for i, step in enumerate(episode.steps))
    episode = replace(episode, steps=steps, meta={**episode.meta, **labels})
    results.put({"kind": "episode", "worker": index, "outcome": episode.outcome,
                 "detoured": bool(labels["detour_steps"])})
    return episode


def _flush(lake: Lake, batch: list, index: int, results) -> None:
    if batch:
        written = lake.write_episodes(batch, origin="collect")
        results.put({"kind": "written", "worker": index, "written": written.written, "skipped": written.skipped,
                     "quarantined": written.quarantined, "reasons": list(written.reasons)})
        batch.clear()
