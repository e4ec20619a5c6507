"""Rollout benchmark: oracle episodes on mock phones through the runner vs. a bare loop.

    .venv/bin/python bench/rollout_bench.py [--quick]

1. Bare: ``collectors.run_episode`` with the oracle on one MockPhone in this process,
   episodes written to a lake in batches (what a minimal script would do).
2. Runner, 1 worker: ``rollout.runner.rollout`` on ``mock:1`` (spawned worker, queue,
   step limits, lake writes) over the same (task, seed) jobs. Target: >= 0.8x the bare loop.
3. Runner, 2 workers: ``mock:2``, for the scaling from 1 to 2 workers.
Figures: episodes/hour (per core for the bare loop and 1 worker). Never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from collectors.loop import OraclePolicy, run_episode
from datalake.lake import Lake
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from rollout.runner import RolloutSpec, jobs_for, rollout

TASKS = "SettingsWifiOn,ClockAddAlarm,NotesCreate,ContactsAdd,ShopAddToCart,HotelSearchBudget"


def bare(lake: Lake, jobs: list[tuple[str, int]]) -> float:
    phone = MockPhone()
    start = time.perf_counter()
    batch = []
    for name, seed in jobs:
        task = registry.get(name)(seed=seed)
        batch.append(run_episode(phone, OraclePolicy(phone, task), task, seed=seed))
        if len(batch) == 4:
            lake.write_episodes(batch)
            batch = []
    if batch:
        lake.write_episodes(batch)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    episodes = 1 if args.quick else 3
    root = Path(tempfile.mkdtemp(prefix="phoneloop-rollout-bench-"))
    try:
        spec = RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:1", episodes=episodes)
        jobs = jobs_for(spec)
        t_bare = bare(Lake.init(root / "bare"), jobs)
        lake1 = Lake.init(root / "one")
        start = time.perf_counter()
        one = rollout(lake1.uri, spec)
        t_one = time.perf_counter() - start
        lake2 = Lake.init(root / "two")
        start = time.perf_counter()
        two = rollout(lake2.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:2", episodes=episodes))
        t_two = time.perf_counter() - start
        n = len(jobs)
        assert one.episodes == two.episodes == n and one.success_rate == two.success_rate == 1.0
        print(f"cpus: {os.cpu_count()}  {n} oracle episodes ({TASKS})")
        print(f"  bare run_episode loop   {3600 * n / t_bare:8.0f} episodes/hour/core")
        print(f"  runner, 1 worker        {3600 * n / t_one:8.0f} episodes/hour/core  "
              f"ratio {t_bare / t_one:.2f}x  (target >= 0.8x)")
        print(f"  runner, 2 workers       {3600 * n / t_two:8.0f} episodes/hour        "
              f"scaling {t_one / t_two:.2f}x over 1 worker")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
