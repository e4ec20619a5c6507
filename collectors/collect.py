"""Collecting episodes into the lake: run a policy over (task, seed) pairs on one phone and write them.

    from collectors.collect import collect
    from phones.episode import OraclePolicy
    report = collect("./lake", phone, OraclePolicy.factory, ["SettingsWifiOff"], seeds=range(3))

Each episode is ``phones.episode.run_episode`` (the one episode loop, shared with
``rollout``); ``collect`` writes the batch through the lake API in one commit, where
validation and quarantine happen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from datalake.types import Episode
from phones.episode import PolicyFactory, instantiate, run_episode
from phones.errors import PhoneError
from phones.protocol import Phone


@dataclass
class CollectReport:
    """What a collection run produced: episodes written, outcomes, and episodes that could not run."""

    episodes: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    skipped: int = 0
    quarantined: int = 0
    errors: list[str] = field(default_factory=list)
    dropped: int = 0  # attempts cut short (a phone or its host gone) kept as partial episodes
    failed_jobs: list[str] = field(default_factory=list)  # "TASK seed N: why" for each job that ended with no episode

    def count(self, episode: Episode) -> None:
        self.episodes += 1
        self.outcomes[episode.outcome] = self.outcomes.get(episode.outcome, 0) + 1

    def merge_write(self, report: Any) -> None:
        self.written += report.written
        self.skipped += report.skipped
        self.quarantined += report.quarantined
        self.errors.extend(report.reasons)


def run_all(phone: Phone, policy_factory: PolicyFactory, tasks: Iterable[Any], *, seeds: Iterable[int] = (0,),
            max_steps: int = 30) -> tuple[list[Episode], list[str]]:
    """One episode per (task, seed); returns the episodes and the reasons of those that could not run."""
    episodes: list[Episode] = []
    errors: list[str] = []
    seeds = list(seeds)
    for item in tasks:
        for seed in seeds:
            task = instantiate(item, seed)
            try:
                policy = policy_factory(phone, task)
                episodes.append(run_episode(phone, policy, task if task is not None else item, seed=seed,
                                            max_steps=max_steps))
            except PhoneError as exc:  # a bad dump or screenshot: nothing half-written
                errors.append(f"{getattr(task, 'name', lambda: item)()} seed {seed}: {exc}")
    return episodes, errors


def collect(lake: Any, phone: Phone, policy_factory: PolicyFactory, tasks: Iterable[Any], *,
            seeds: Iterable[int] = (0,), max_steps: int = 30) -> CollectReport:
    """Run episodes and write them to ``lake`` (a Lake or a URI) in one batch; invalid ones are quarantined."""
    episodes, errors = run_all(phone, policy_factory, tasks, seeds=seeds, max_steps=max_steps)
    return write(lake, episodes, errors)


def write(lake: Any, episodes: list[Episode], errors: Iterable[str] = ()) -> CollectReport:
    """Write collected episodes through the lake API (validation and quarantine happen there)."""
    from datalake.lake import Lake

    report = CollectReport(errors=list(errors))
    for ep in episodes:
        report.count(ep)
    if episodes:
        target = lake if isinstance(lake, Lake) else Lake.open(str(lake))
        report.merge_write(target.write_episodes(episodes, origin="collect"))
    return report
