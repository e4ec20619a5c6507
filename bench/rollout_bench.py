"""Rollout benchmark: the runner against a bare loop, and what endpoint faults cost.

    .venv/bin/python bench/rollout_bench.py [--quick]

1. Bare: ``collectors.run_episode`` with the oracle on one MockPhone in this process,
   episodes written to a lake in batches of 4 (what a minimal script would do); run
   before and after the runners, the faster run is the baseline.
2. Runner with 1, 2 and 4 workers (``mock:N``: spawned workers, shared job queue, step
   limits, deterministic ids, lake writes) over the same (task, seed) jobs. Target for
   1 worker: >= 0.9x the bare loop; more workers show the scaling (bounded by cores).
3. Faults: an endpoint (loopback chat server) that fails a scripted share of requests
   (500, garbage, dropped connections, 429); figure: finished episodes missing from the
   lake per injected fault (target 0), and the retries recorded.
4. A hung endpoint: every request hangs (accepts, never answers); figure: seconds one
   worker loses per job, the hung run's wall time minus a healthy endpoint's over the same
   jobs, per job per worker, against the client's deadline ``timeout x max(1, retries)``
   (tries and backoff pauses included; target: <=), and the longest call the client saw.
Figures are printed, never asserted. The machine may be shared: say so with the numbers.
"""

from __future__ import annotations

import argparse
import os
import re
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
DONE = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'
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
    """Per worker: the extra wall time of jobs whose every request hangs, over the same jobs
    against a healthy endpoint (one request each, answered at once), per job; and the
    longest call the client itself reported. Bound: the client's deadline per request,
    timeout x max(1, retries), backoff pauses included."""
    options = PolicyOptions(timeout=0.5, retries=2, backoff=0.01)
    bound = options.timeout * max(1, options.retries)
    workers, spec = 2, dict(tasks=TASKS, phones="mock:2", episodes=2, max_steps=3, options=options)
    jobs = len(jobs_for(RolloutSpec(policy="oracle", **{k: spec[k] for k in ("tasks", "episodes")})))
    seconds = {}
    for fault in ("hang", None):
        lake = Lake.init(root / f"hung-{fault}")
        with ChatServer(lambda body: DONE, faults=lambda n: fault, hang_seconds=30) as server:
            start = time.perf_counter()
            report = rollout(lake.uri, RolloutSpec(policy=server.url, **spec))
            seconds[fault] = time.perf_counter() - start
        if fault == "hang":
            calls = [float(m.group(1)) for m in map(re.compile(r"tries in ([0-9.]+) s").search, report.errors) if m]
    per = (seconds["hang"] - seconds[None]) / (jobs / workers)
    print(f"  hung endpoint           {per:.2f} s lost per hung job per worker (bound: timeout x max(1, retries) = "
          f"{bound:.2f} s; {len(calls)} of {jobs} jobs ended by the deadline, longest call {max(calls):.2f} s as the "
          f"client measured it; {workers} workers, {seconds['hang']:.1f} s hung vs {seconds[None]:.1f} s healthy)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    episodes = 1 if args.quick else 3
    root = Path(tempfile.mkdtemp(prefix="phoneloop-rollout-bench-"))
    try:
        jobs = jobs_for(RolloutSpec(policy="oracle", tasks=TASKS, episodes=episodes))
        n = len(jobs)
        print(f"cpus: {os.cpu_count()} (load average {os.getloadavg()[0]:.1f})  {n} oracle episodes ({TASKS})")
        # on a shared machine the load drifts: the bare loop runs before and after the runners,
        # and the faster of its two runs is the baseline (the harder one to match)
        first = bare(Lake.init(root / "bare"), jobs)
        runs = {}
        for workers in (1, 2, 4):
            runs[workers], done = runner(root, workers, episodes)
            assert done == n
        second = bare(Lake.init(root / "bare2"), jobs)
        t_bare = min(first, second)
        print(f"  bare run_episode loop   {3600 * n / t_bare:8.0f} episodes/hour  (runs: {first:.1f} s before, "
              f"{second:.1f} s after the runners)")
        for workers, seconds in runs.items():
            print(f"  runner, {workers} worker(s)     {3600 * n / seconds:8.0f} episodes/hour  "
                  f"ratio {t_bare / seconds:.2f}x bare (target >= 0.9x for 1)  scaling {runs[1] / seconds:.2f}x")
        faults(root, episodes)
        hung(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
