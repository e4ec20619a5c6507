"""Rollout benchmark: the runner against a bare loop, and what endpoint faults cost.

    .venv/bin/python bench/rollout_bench.py [--quick]

1. Bare: ``collectors.run_episode`` with the oracle on one MockPhone in this process,
   episodes written to a lake in commits of 4, inline (what a minimal script would do).
   Against it, the runner with 1 worker (``mock:1``: the worker in a thread of this
   process, shared job queue, step limits, deterministic ids, its writer thread's lake
   commits) over the same (task, seed) jobs on the same kind of phone, in alternating pairs
   after one warm-up pass excluded from both; figure: the median ratio of bare time to
   runner time (target >= 0.9x), and the same in CPU seconds. The loop with no lake at all
   is printed for reference.
2. Runner with 2 and 4 workers (spawned processes, each paying its interpreter, imports
   and cold caches) against the same bare figure: the scaling, bounded by the cores.
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
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datalake.lake import Lake  # noqa: E402
from mockphone.phone import MockPhone  # noqa: E402
from mockphone.tasks import registry  # noqa: E402
from phones.episode import OraclePolicy, run_episode  # noqa: E402
from rollout.policies import PolicyOptions  # noqa: E402
from rollout.runner import rollout  # noqa: E402
from rollout.spec import RolloutSpec, jobs_for  # noqa: E402
from tests.rollout.chat_server import ChatServer  # noqa: E402

TASKS = "SettingsWifiOn,ClockAddAlarm,NotesCreate,ContactsAdd,ShopAddToCart,HotelSearchBudget"
DONE = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'
TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'


def bare(lake: Lake | None, jobs: list[tuple[str, int]]) -> tuple[float, float]:
    """(wall, CPU) seconds of the plain loop: its phone, the episodes, and (with a lake) its
    commits of 4 episodes, inline; the runner's figure also covers making its phone."""
    start, cpu = time.perf_counter(), time.process_time()
    phone = MockPhone()
    batch = []
    for name, seed in jobs:
        task = registry.get(name)(seed=seed)
        batch.append(run_episode(phone, OraclePolicy(phone, task), task, seed=seed))
        if len(batch) == 4 and lake is not None:
            lake.write_episodes(batch)
            batch = []
    if batch and lake is not None:
        lake.write_episodes(batch)
    phone.close()
    return time.perf_counter() - start, time.process_time() - cpu


def runner(root: Path, workers: int, episodes: int, n: int) -> tuple[float, float]:
    """(wall, CPU) seconds of ``rollout`` over the same jobs on ``mock:WORKERS``; CPU counts
    this process and the spawned workers."""
    lake = Lake.init(root / f"runner{workers}-{time.monotonic_ns()}")
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks=TASKS, phones=f"mock:{workers}", episodes=episodes))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu + _children_cpu() - children
    if (report.episodes, report.written) != (n, n):
        raise SystemExit(f"runner with {workers} worker(s): {report.episodes} episodes, {report.written} written, "
                         f"expected {n}: {report.errors}")
    return wall, cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def overhead(root: Path, jobs: list, episodes: int, pairs: int) -> tuple[float, float]:
    """The bare loop and the 1-worker runner in alternating pairs (bare first, then runner
    first, ...), so drifting load hits both alike; returns the median bare and runner times. Warm-up
    (imports, fonts, icon and screen caches, deltalake's first commit) was paid before."""
    n, ratios, cpu_ratios, bares, runs = len(jobs), [], [], [], []
    for k in range(pairs):
        order = ("bare", "runner") if k % 2 == 0 else ("runner", "bare")
        got = {}
        for side in order:
            got[side] = bare(Lake.init(root / f"bare-{k}"), jobs) if side == "bare" else runner(root, 1, episodes, n)
        (b_wall, b_cpu), (r_wall, r_cpu) = got["bare"], got["runner"]
        bares.append(b_wall)
        runs.append(r_wall)
        ratios.append(b_wall / r_wall)
        cpu_ratios.append(b_cpu / r_cpu)
        print(f"    pair {k + 1} ({' then '.join(order)}): bare {b_wall:5.2f} s wall {b_cpu:5.2f} s CPU, runner "
              f"{r_wall:5.2f} s wall {r_cpu:5.2f} s CPU: ratio {b_wall / r_wall:.2f}x wall, {b_cpu / r_cpu:.2f}x CPU  "
              f"(load {os.getloadavg()[0]:.1f})")
    print(f"  runner, 1 worker        ratio {statistics.median(ratios):.2f}x bare (median of {pairs} pairs, "
          f"min {min(ratios):.2f}x, max {max(ratios):.2f}x; CPU {statistics.median(cpu_ratios):.2f}x; "
          "target >= 0.9x)")
    return statistics.median(bares), statistics.median(runs)


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
    episodes, pairs = (1, 2) if args.quick else (3, 4)
    root = Path(tempfile.mkdtemp(prefix="phoneloop-rollout-bench-"))
    try:
        jobs = jobs_for(RolloutSpec(policy="oracle", tasks=TASKS, episodes=episodes))
        n = len(jobs)
        print(f"cpus: {os.cpu_count()} (load average {os.getloadavg()[0]:.1f})  {n} oracle episodes ({TASKS})")
        bare(Lake.init(root / "warm-up"), jobs_for(RolloutSpec(policy="oracle", tasks=TASKS)))  # every task once
        t_bare, one = overhead(root, jobs, episodes, pairs)
        (no_writes, no_writes_cpu), (_, with_cpu) = bare(None, jobs), bare(Lake.init(root / "bare-cpu"), jobs)
        print(f"  bare run_episode loop   {3600 * n / t_bare:8.0f} episodes/hour (median of {pairs}, writes inline "
              f"in commits of 4); with no lake at all {3600 * n / no_writes:.0f} episodes/hour, {no_writes_cpu:.2f} s "
              f"CPU against {with_cpu:.2f} s with the writes (one run each: noisy under load)")
        for workers in (2, 4):  # spawned processes: each pays an interpreter, imports and cold caches
            seconds, cpu = runner(root, workers, episodes, n)
            print(f"  runner, {workers} workers       {3600 * n / seconds:8.0f} episodes/hour  ratio "
                  f"{t_bare / seconds:.2f}x bare  scaling {one / seconds:.2f}x 1 worker (median {one:.1f} s); "
                  f"{cpu:.1f} s CPU in all (load {os.getloadavg()[0]:.1f})")
        faults(root, episodes)
        hung(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
