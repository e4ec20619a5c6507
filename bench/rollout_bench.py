"""Rollout benchmark: the runner against a bare loop, and what endpoint faults cost.

    .venv/bin/python bench/rollout_bench.py [--quick]

1. Bare: ``collectors.run_episode`` with the oracle on one MockPhone in this process,
   episodes written to a lake in batches of 4 (what a minimal script would do).
2. Runner with 1, 2 and 4 workers (``mock:N``: spawned workers, shared job queue, step
   limits, deterministic ids, lake writes) over the same (task, seed) jobs. Target for
   1 worker: >= 0.9x the bare loop; more workers show the scaling (bounded by cores).
3. Faults: an endpoint (loopback chat server) that fails a scripted share of requests
   (500, garbage, dropped connections, 429); figure: finished episodes missing from the
   lake per injected fault (target 0), and the retries recorded.
4. A hung endpoint: every request hangs; figure: seconds one worker loses per episode
   against the configured ``timeout x retries`` (target: <=).
Figures are printed, never asserted. The machine may be shared: say so with the numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors.loop import OraclePolicy, run_episode  # noqa: E402
from datalake.lake import Lake  # noqa: E402
from mockphone.phone import MockPhone  # noqa: E402
from mockphone.tasks import registry  # noqa: E402
from rollout.policies import PolicyOptions  # noqa: E402
from rollout.runner import RolloutSpec, jobs_for, rollout  # noqa: E402
from tests.rollout.chat_server import ChatServer  # noqa: E402

TASKS = "SettingsWifiOn,ClockAddAlarm,NotesCreate,ContactsAdd,ShopAddToCart,HotelSearchBudget"
TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'


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


def runner(root: Path, workers: int, episodes: int) -> tuple[float, int]:
    lake = Lake.init(root / f"runner{workers}")
    start = time.perf_counter()
    report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones=f"mock:{workers}", episodes=episodes))
    return time.perf_counter() - start, report.episodes


def faults(root: Path, episodes: int) -> None:
    script = {0: "500", 1: "garbage", 2: "drop", 3: "429"}
    injected = []
    lake = Lake.init(root / "faults")
    with ChatServer(lambda body: TAP, faults=lambda n: script.get(n % 7)) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks=TASKS, phones="mock:2", episodes=episodes,
                                               max_steps=3, options=PolicyOptions(timeout=2, retries=3, backoff=0.01)))
        injected = [f for _, f in server.served if f != "ok"]
    stored = Lake.open(lake.uri).sql("SELECT count(*) FROM episodes").column(0)[0].as_py()
    lost = report.episodes - stored
    print(f"  endpoint faults         {len(injected)} injected, {report.retries} retried, {report.episodes} episodes "
          f"finished, {stored} in the lake: {lost / max(1, len(injected)):.3f} lost per fault (target 0), "
          f"{report.policy_errors} policy_error episodes")


def hung(root: Path) -> None:
    options = PolicyOptions(timeout=0.5, retries=2, backoff=0.01)
    lake = Lake.init(root / "hung")
    with ChatServer(lambda body: TAP, faults=lambda n: "hang", hang_seconds=30) as server:
        start = time.perf_counter()
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn,ClockAddAlarm",
                                               phones="mock:1", episodes=2, max_steps=3, options=options))
        seconds = time.perf_counter() - start
    base = time.perf_counter()
    rollout(lake.uri, RolloutSpec(policy="random", tasks="SettingsWifiOn,ClockAddAlarm", phones="mock:1",
                                  episodes=2, max_steps=3))
    overhead = time.perf_counter() - base
    jobs = 4
    per = max(0.0, seconds - overhead) / jobs
    print(f"  hung endpoint           {per:.2f} s lost per episode per worker (timeout x retries = "
          f"{options.timeout * options.retries:.2f} s; {len(report.errors)} jobs ended without a step, "
          f"random-policy run of the same jobs as baseline {overhead:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    episodes = 1 if args.quick else 3
    root = Path(tempfile.mkdtemp(prefix="phoneloop-rollout-bench-"))
    try:
        jobs = jobs_for(RolloutSpec(policy="oracle", tasks=TASKS, episodes=episodes))
        n = len(jobs)
        t_bare = bare(Lake.init(root / "bare"), jobs)
        print(f"cpus: {os.cpu_count()} (load average {os.getloadavg()[0]:.1f})  {n} oracle episodes ({TASKS})")
        print(f"  bare run_episode loop   {3600 * n / t_bare:8.0f} episodes/hour")
        t_one = None
        for workers in (1, 2, 4):
            seconds, done = runner(root, workers, episodes)
            assert done == n
            t_one = t_one or seconds
            print(f"  runner, {workers} worker(s)     {3600 * n / seconds:8.0f} episodes/hour  "
                  f"ratio {t_bare / seconds:.2f}x bare (target >= 0.9x for 1)  scaling {t_one / seconds:.2f}x")
        faults(root, episodes)
        hung(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
