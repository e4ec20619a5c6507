"""Run a policy on phones and write the verified episodes back into the lake.

    report = rollout("./lake", RolloutSpec(policy="oracle", phones="mock:4", tasks="app:clock", episodes=2))

1. Jobs: every (task, seed) pair for the selected tasks, ``episodes`` seeds each, dealt
   round-robin to the phones.
2. Workers: one spawned process per phone (``mock:N`` makes N MockPhones; ``adb:S1,S2``
   uses those serials through the adb server). A local checkpoint is loaded once, in
   this process, and served to the workers by a batching loopback endpoint
   (``rollout.model_server``). Each worker builds a fresh policy per
   episode, runs ``collectors.run_episode`` with a step limit (default: twice the
   oracle's solution length on mock phones, 30 on real ones; the oracle policy itself
   needs none), retries an episode once on
   a device error, and writes its episodes to the lake in small batches (the lake
   validates and quarantines). Results stream back for the live progress bar.
3. Each episode gets a fresh id (a rollout is a new sample even when a deterministic
   policy repeats an earlier one). Outcomes come from the task verifiers on mock phones; on real phones they stay
   ``unknown`` until a human judges them. A policy that says "done" without doing the
   task gets ``failure`` from the verifier. Episodes carry ``source=rollout``, the
   policy, the round and ``meta.rollout_id``.
"""

from __future__ import annotations

import queue as queue_module
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable

from collectors.errors import CollectorError, EpisodeAborted
from collectors.loop import run_episode
from datalake.lake import Lake, spawn_context
from rollout.errors import PhonesSpecError, PolicyError
from rollout.policies import INVALID, PolicyOptions, make_policy

WRITE_EVERY = 4  # episodes per lake commit from a worker
REAL_MAX_STEPS = 30


@dataclass(frozen=True)
class RolloutSpec:
    policy: str  # oracle | random[:SEED] | http(s)://... | model name or path
    tasks: str  # a mockphone task selector, e.g. "app:shop" or "category:mini-app"
    phones: str = "mock:2"
    episodes: int = 1  # per task (seeds 0..episodes-1, offset by seed)
    round: int | None = None
    max_steps: int | None = None  # default: 2x the oracle's length (mock) or 30 (real)
    seed: int = 0
    options: PolicyOptions = field(default_factory=PolicyOptions)
    meta: dict[str, Any] = field(default_factory=dict)  # added to every episode's meta
    name: str | None = None  # the policy's name in the lake (default: from the policy itself)
    perturb: str = "none"  # mock phones' perturbation profile: none, light, real-like, heavy, or a YAML path


@dataclass
class RolloutReport:
    rollout_id: str
    episodes: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    quarantined: int = 0
    invalid_steps: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def success_rate(self) -> float:
        return self.outcomes.get("success", 0) / self.episodes if self.episodes else 0.0


def parse_phones(phones: str) -> tuple[str, list[str]]:
    """``mock:N`` -> ("mock", ["mock-0", ...]); ``adb:S1,S2`` -> ("adb", ["S1", "S2"])."""
    kind, _, rest = phones.partition(":")
    if kind == "mock" and rest.isdigit() and int(rest) > 0:
        return "mock", [f"mock-{i}" for i in range(int(rest))]
    if kind == "adb" and rest and all(rest.split(",")):
        return "adb", rest.split(",")
    raise PhonesSpecError(f"--phones must be mock:N (N >= 1) or adb:SERIAL[,SERIAL...], not {phones!r}")


def jobs_for(spec: RolloutSpec) -> list[tuple[str, int]]:
    from mockphone.errors import UnknownTask
    from mockphone.tasks import registry

    try:
        names = [t.name() for t in registry.select(spec.tasks)]
    except UnknownTask as exc:
        raise PolicyError(f"task selector {spec.tasks!r}: {exc}") from None
    if not names:
        raise PolicyError(f"task selector {spec.tasks!r} matches no task")
    return [(name, spec.seed + k) for name in names for k in range(spec.episodes)]


def rollout(lake_uri: str, spec: RolloutSpec, *, progress: Callable[[RolloutReport], None] | None = None,
            adb_port: int | None = None) -> RolloutReport:
    kind, phones = parse_phones(spec.phones)
    _check_perturb(kind, spec.perturb)
    jobs = jobs_for(spec)
    Lake.open(lake_uri)  # fail here, not in every worker, when there is no lake
    if not is_builtin(spec.policy):  # a local checkpoint: load it once here, serve the workers in batches
        from rollout.model_server import ModelServer

        server = ModelServer.load(lake_uri, spec.policy, max_batch=len(phones)).start()
        try:
            return rollout(lake_uri, replace(spec, policy=server.url, name=spec.name or spec.policy),
                           progress=progress, adb_port=adb_port)
        finally:
            server.stop()
    report = RolloutReport(rollout_id=uuid.uuid4().hex[:12])
    shares = {p: jobs[i::len(phones)] for i, p in enumerate(phones)}
    ctx = spawn_context()
    results = ctx.Queue()
    workers = [ctx.Process(target=_worker, args=(lake_uri, kind, phone, share, asdict(spec), report.rollout_id,
                                                  adb_port, results))
               for phone, share in shares.items() if share]
    for w in workers:
        w.start()
    finished = 0
    while finished < len(workers):
        try:
            message = results.get(timeout=1.0)
        except queue_module.Empty:
            if not any(w.is_alive() for w in workers):
                report.errors.append("a worker died without reporting")
                break
            continue
        finished += _absorb(report, message)
        if progress is not None:
            progress(report)
    for w in workers:
        w.join()
    return report


def _absorb(report: RolloutReport, message: dict) -> int:
    kind = message["kind"]
    if kind == "episode":
        report.episodes += 1
        report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
        report.invalid_steps += message["invalid_steps"]
    elif kind == "written":
        report.written += message["written"]
        report.quarantined += message["quarantined"]
    elif kind == "error":
        report.errors.append(message["error"])
    return int(kind == "done")


def is_builtin(policy: str) -> bool:
    """oracle, random[:SEED] and http(s) endpoints; anything else is a local checkpoint."""
    return policy in ("oracle", "random") or policy.startswith(("random:", "http://", "https://"))


def _worker(lake_uri: str, kind: str, phone_id: str, jobs: list[tuple[str, int]], spec_dict: dict,
            rollout_id: str, adb_port: int | None, results) -> None:
    spec = RolloutSpec(**{**spec_dict, "options": PolicyOptions(**spec_dict["options"])})
    lake = Lake.open(lake_uri)
    batch: list = []
    try:
        phone = _make_phone(kind, phone_id, adb_port, spec.perturb)
        for name, seed in jobs:
            episode = _one(lake_uri, phone, kind, name, seed, spec, rollout_id, phone_id, results)
            if episode is not None:
                batch.append(episode)
            if len(batch) >= WRITE_EVERY:
                _flush(lake, batch, results)
        _flush(lake, batch, results)
    except Exception as exc:  # report, never hang the parent
        results.put({"kind": "error", "error": f"{phone_id}: {type(exc).__name__}: {exc}"})
    finally:
        results.put({"kind": "done"})


def _check_perturb(kind: str, perturb: str) -> None:
    from mockphone.perturb import load_profile

    load_profile(perturb)  # an unknown profile lists the valid ones (BadPerturbationProfile, a ValueError)
    if kind != "mock" and perturb != "none":
        raise PhonesSpecError(f"--perturb {perturb} needs mock phones: real phones bring their own interruptions")


def _make_phone(kind: str, phone_id: str, adb_port: int | None, perturb: str = "none"):
    if kind == "mock":
        from mockphone.phone import MockPhone

        return MockPhone(perturbations=perturb)
    from collectors.adb_phone import AdbPhone

    return AdbPhone(phone_id, port=adb_port)


def _one(lake_uri, phone, kind, name, seed, spec: RolloutSpec, rollout_id, phone_id, results):
    from mockphone.tasks import registry

    task = registry.get(name)(seed=seed)
    max_steps = spec.max_steps or _step_limit(spec.policy, kind, task, seed, spec.perturb)
    meta = {"rollout_id": rollout_id, "phone": phone_id, **spec.meta}
    for attempt in (1, 2):
        try:
            policy = make_policy(spec.policy, phone, task, spec.options, lake_uri=lake_uri, name=spec.name)
            episode = run_episode(phone, policy, task, seed=seed, max_steps=max_steps, round=spec.round, meta=meta)
            break
        except (CollectorError, EpisodeAborted) as exc:
            if attempt == 2:
                results.put({"kind": "error", "error": f"{phone_id}: {name} seed {seed}: {exc}"})
                return None
    invalid = sum(1 for s in episode.steps if (s.raw_output or "").startswith(INVALID))
    # Every rollout is its own sample: an id of its own, even when a deterministic policy
    # repeats an earlier episode step for step (content ids would dedup it away).
    episode = replace(episode, episode_id=f"{rollout_id}-{uuid.uuid4().hex[:12]}",
                      meta={**episode.meta, **({"invalid_steps": invalid} if invalid else {})})
    results.put({"kind": "episode", "outcome": episode.outcome, "invalid_steps": invalid})
    return episode


def _flush(lake: Lake, batch: list, results) -> None:
    if batch:
        written = lake.write_episodes(batch, origin="rollout")
        results.put({"kind": "written", "written": written.written, "quarantined": written.quarantined})
        batch.clear()


_OPTIMAL: dict[tuple[str, int, str], int] = {}
ORACLE_MAX_STEPS = 300  # the oracle ends its own episodes; this only guards against a stuck one


def _step_limit(policy: str, kind: str, task, seed: int, perturb: str = "none") -> int:
    if policy == "oracle":
        return ORACLE_MAX_STEPS
    return 2 * _optimal_length(task, seed, perturb) if kind == "mock" else REAL_MAX_STEPS


def _optimal_length(task, seed: int, perturb: str = "none") -> int:
    """Steps the oracle needs on a fresh mock phone with the same perturbations (including its terminate)."""
    key = (task.name(), seed, perturb)
    if key not in _OPTIMAL:
        from mockphone.phone import MockPhone
        from mockphone.tasks.oracle import solve

        scratch = MockPhone(perturbations=perturb)
        try:
            scratch.reset(seed)
            fresh = type(task)(seed=seed)
            fresh.initialize_task(scratch)
            _OPTIMAL[key] = max(1, len(solve(scratch, fresh)))
        finally:
            scratch.close()
    return _OPTIMAL[key]

