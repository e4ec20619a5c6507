"""Protocol overhead of the virtual adb server: observe()+act() through adb vs. on the MockPhone directly.

    .venv/bin/python bench/adb_bench.py            # ~30 s
    .venv/bin/python bench/adb_bench.py --quick    # a few seconds

The same oracle action sequences (recorded once, outside the timed part) are replayed
three ways in one run, each step being ``observe()`` then ``act()``:

1. baseline: the MockPhone called directly (render PNG + dump XML + act);
2. AdbPhone -> adbutils -> loopback virtual adb server -> the same kind of MockPhone,
   without settling (one ``screencap -p``, one ``uiautomator dump`` + ``dumpsys window``,
   one ``input``), and with settling (a second dump that must agree);
3. four virtual phones on one server, driven by four client processes (spawn) at once.

Printed: ms/step for each, the overhead ratio (adb ÷ direct; target ≤ 3×) and steps/s
with four phones in parallel. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

TASKS = ("SettingsWifiOff", "NotesCreate", "ContactsAdd", "ShopSearchPriceRange", "ClockSetAlarm", "MailSend")


def plans(seed: int = 0) -> list[tuple[str, list]]:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import solve
    from mockphone.tasks.registry import REGISTRY

    out = []
    for name in TASKS:
        if name not in REGISTRY:
            continue
        phone = MockPhone(seed=seed)
        task = REGISTRY[name](seed=seed)
        task.initialize_task(phone)
        out.append((name, solve(phone, task)))
    return out


def run_direct(recorded, budget_s: float) -> tuple[int, float]:
    from mockphone.phone import MockPhone
    from mockphone.tasks.registry import REGISTRY

    steps, spent = 0, 0.0
    while spent < budget_s:
        for name, actions in recorded:
            phone = MockPhone(seed=0)
            REGISTRY[name](seed=0).initialize_task(phone)
            t = time.perf_counter()
            for a in actions:
                phone.observe()
                phone.act(a)
            spent += time.perf_counter() - t
            steps += len(actions)
    return steps, spent


def run_adb(port: int, serial: str, recorded, budget_s: float, settle: bool) -> tuple[int, float]:
    from collectors.adb_phone import AdbPhone
    from mockphone.tasks.registry import REGISTRY

    phone = AdbPhone(serial, port=port, settle=settle)
    steps, spent = 0, 0.0
    while spent < budget_s:
        for name, actions in recorded:
            phone.start_task(REGISTRY[name](seed=0), 0)
            t = time.perf_counter()
            for a in actions:
                phone.observe()
                phone.act(a)
            spent += time.perf_counter() - t
            steps += len(actions)
    return steps, spent


def _parallel_worker(port: int, serial: str, budget_s: float) -> tuple[int, float]:
    return run_adb(port, serial, plans(), budget_s, settle=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short budgets (a few seconds)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    budget = 1.5 if args.quick else 6.0

    from mockphone.adb import VirtualAdbServer

    recorded = plans()
    results: dict[str, float] = {}
    d_steps, d_time = run_direct(recorded, budget)
    results["direct_ms_per_step"] = 1000 * d_time / d_steps
    with VirtualAdbServer(phones=4, port=0) as server:
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(server.port)
        for settle in (False, True):
            s, t = run_adb(server.port, "emulator-5554", recorded, budget, settle)
            key = "adb_settled" if settle else "adb"
            results[f"{key}_ms_per_step"] = 1000 * t / s
            results[f"{key}_overhead_ratio"] = results[f"{key}_ms_per_step"] / results["direct_ms_per_step"]
        serials = [d.serial for d in server.devices]
        from multiprocessing import get_context

        with ProcessPoolExecutor(len(serials), mp_context=get_context("spawn")) as pool:
            wall = time.perf_counter()
            done = list(pool.map(_parallel_worker, [server.port] * 4, serials, [budget] * 4))
            wall = time.perf_counter() - wall
        results["parallel4_steps_per_s"] = sum(s for s, _ in done) / max(t for _, t in done)
        results["single_steps_per_s"] = 1000 / results["adb_ms_per_step"]
        results["cpus"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"direct MockPhone        {results['direct_ms_per_step']:7.1f} ms/step")
    print(f"AdbPhone (no settle)    {results['adb_ms_per_step']:7.1f} ms/step  "
          f"overhead {results['adb_overhead_ratio']:.2f}x (target <= 3x)")
    print(f"AdbPhone (settled)      {results['adb_settled_ms_per_step']:7.1f} ms/step  "
          f"overhead {results['adb_settled_overhead_ratio']:.2f}x")
    print(f"4 virtual phones        {results['parallel4_steps_per_s']:7.1f} steps/s "
          f"(1 phone: {results['single_steps_per_s']:.1f} steps/s; {results['cpus']} CPUs)")


if __name__ == "__main__":
    main()
