"""What a rollout runs and how its episodes are named: the spec, its jobs, the policy's identity, the ids.

    spec = RolloutSpec(policy="oracle", phones="mock:4", tasks="app:clock", episodes=2, run_id="loop/1/rollout")
    jobs_for(spec)                     # [("ClockSetAlarm", 0), ("ClockSetAlarm", 1), ...]
    rollout_id_for(spec)               # a hash of run_id and the policy's identity (random without a run_id)
    episode_id(rollout_id, task, seed, attempt)

``rollout.runner`` (the parent) and ``rollout.worker`` (each phone's process) both read these;
neither imports the other for them.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from rollout.errors import PhonesSpecError, PolicyError
from rollout.policies import PolicyOptions, endpoint_name


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
    name: str | None = None  # the policy's name in the lake (default: its identity, see policy_identity)
    run_id: str | None = None  # same run_id -> same episode ids; a rerun skips what the lake holds
    purpose: str = "train"  # train | eval: eval episodes are never selected for training by default
    attempts: int = 3  # tries of a job whose phone dropped out (each on another phone)
    perturb: str = "none"  # mock phones' perturbation profile: none, light, real-like, heavy, or a YAML path
    locale: str = "en-US"  # mock phones' locale (en-US, zh-CN): screens and instructions, recorded as meta.locale
    backend: str = "local"  # local (spawned processes) | ray (one Ray actor per phone), see fleet.backends
    address: str | None = None  # Ray cluster address (auto, ray://HOST:PORT); None starts a local one
    seeds: tuple[int, ...] | None = None  # these seeds for every task (instead of seed..seed+episodes-1)
    jobs: tuple[tuple[str, int], ...] | None = None  # exactly these (task, seed) jobs: an evaluation suite's


def parse_phones(phones: str) -> tuple[str, list[str]]:
    """``mock:N`` -> ("mock", ["mock-0", ...]); ``adb:S1,S2`` -> ("adb", ["S1", "S2"])."""
    kind, _, rest = phones.partition(":")
    if kind == "mock" and rest.isdigit() and int(rest) > 0:
        return "mock", [f"mock-{i}" for i in range(int(rest))]
    if kind == "adb" and rest and all(rest.split(",")):
        return "adb", rest.split(",")
    raise PhonesSpecError(f"--phones must be mock:N (N >= 1) or adb:SERIAL[,SERIAL...], not {phones!r}")


def jobs_for(spec: RolloutSpec) -> list[tuple[str, int]]:
    """The (task, seed) jobs of ``spec``: ``spec.jobs`` when given (a suite's instances), else every
    selected task on ``spec.seeds`` or on ``spec.seed .. spec.seed + episodes - 1``."""
    from mockphone.errors import UnknownTask
    from mockphone.tasks import registry

    if spec.jobs is not None:
        known = set(registry.REGISTRY)
        unknown = sorted({task for task, _ in spec.jobs} - known)
        if unknown:
            raise PolicyError(f"unknown task(s) {', '.join(unknown)} in the jobs (see phoneloop tasks list)")
        if not spec.jobs:
            raise PolicyError("no job to run: the job list is empty")
        return [(task, int(seed)) for task, seed in spec.jobs]
    try:
        names = [t.name() for t in registry.select(spec.tasks)]
    except UnknownTask as exc:
        raise PolicyError(f"task selector {spec.tasks!r}: {exc}") from None
    if not names:
        raise PolicyError(f"task selector {spec.tasks!r} matches no task")
    seeds = list(spec.seeds) if spec.seeds is not None else [spec.seed + k for k in range(spec.episodes)]
    if not seeds:
        raise PolicyError("no seed to run: the seed list is empty")
    return [(name, seed) for name in names for seed in seeds]


def policy_identity(spec: RolloutSpec) -> str:
    """The policy's name in the lake: ``random:7``, ``oracle``, ``endpoint:MODEL@HOST/PATH``, a model name."""
    if spec.name:
        return spec.name
    if spec.policy.startswith(("http://", "https://")):
        return endpoint_name(spec.policy, spec.options)
    return spec.policy


def rollout_id_for(spec: RolloutSpec) -> str:
    if spec.run_id is None:
        return uuid.uuid4().hex[:12]
    return hashlib.sha1(f"{spec.run_id}\x00{policy_identity(spec)}".encode()).hexdigest()[:12]


def episode_id(rollout_id: str, task: str, seed: int, attempt: int) -> str:
    """Deterministic per (rollout, task, seed, attempt); the rollout id covers run and policy."""
    return f"{rollout_id}-{hashlib.sha1(f'{task}|{seed}|{attempt}'.encode()).hexdigest()[:16]}"
