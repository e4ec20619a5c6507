"""adb path benchmarks: protocol overhead, recorder pairing at human pace, farm throughput when a phone dies.

    .venv/bin/python bench/adb_bench.py            # a few minutes
    .venv/bin/python bench/adb_bench.py --quick    # under a minute

1. Protocol overhead: the same oracle action sequences replayed as ``observe()`` + ``act()``
   on the MockPhone directly (baseline) and through AdbPhone -> adbutils -> the virtual adb
   server, without and with settling; four phones driven by four spawn processes at once.
2. Recorder pairing: a scripted operator performs oracle demonstrations with fixed gaps of
   0.3, 0.5 and 1.0 s between gestures on a virtual phone whose screencap takes 1.2 s and
   dump 0.5 s, never waiting. Printed: the share of steps paired with the screen actually
   shown before them, flagged steps, wrong-but-unflagged steps, the median age of the
   paired frame at touch-down (``frame_lag_ms``: what time pairing adds to each step's
   staleness) and the assembly time per step at ``stop``. Baseline, in the same run: a
   naive recorder that observes (screencap + dump) back to back and pairs each action with
   the last observation *completed* before its touch-down; and the same recorder with
   host-clock frame times (a phone without ``screenshot_at``: the request's host time, as
   the recorder did before frames were stamped on the phone), which misdates frames when
   the host is loaded. ``stall``: both recorders when, 2.5 s in, screencaps slow to 3 s and
   start 0.5 s late (0.4 s gaps).
3. Farm: 12 jobs over 3 healthy phones (baseline) vs 4 phones of which one goes offline
   halfway through (its cut episode is retried elsewhere). Printed: episodes/s and the ratio.

Timings are printed, never asserted; the machine is shared, so compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor

TASKS = ("SettingsWifiOff", "NotesCreate", "ContactsAdd", "ShopSearchPriceRange", "ClockSetAlarm", "MailSend")
PACE_TASKS = (("ContactsAdd", 0), ("ShopSearchPriceRange", 1), ("SettingsWifiOff", 0))


def plans(seed: int = 0, names=TASKS) -> list[tuple[str, list]]:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import solve
    from mockphone.tasks.registry import REGISTRY

    out = []
    for name in names:
        if name not in REGISTRY:
            continue
        phone = MockPhone(seed=seed)
        task = REGISTRY[name](seed=seed)
        task.initialize_task(phone)
        out.append((name, solve(phone, task)))
    return out


# --- 1. protocol overhead -------------------------------------------------------------------------
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
    from mockphone.tasks.registry import REGISTRY
    from phones.adb_phone import AdbPhone

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


def bench_protocol(budget: float) -> dict[str, float]:
    from multiprocessing import get_context

    from mockphone.adb import VirtualAdbServer

    recorded = plans()
    r: dict[str, float] = {}
    d_steps, d_time = run_direct(recorded, budget)
    r["direct_ms_per_step"] = 1000 * d_time / d_steps
    with VirtualAdbServer(phones=4, port=0) as server:
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(server.port)
        for settle in (False, True):
            s, t = run_adb(server.port, "emulator-5554", recorded, budget, settle)
            key = "adb_settled" if settle else "adb"
            r[f"{key}_ms_per_step"] = 1000 * t / s
            r[f"{key}_overhead_ratio"] = r[f"{key}_ms_per_step"] / r["direct_ms_per_step"]
        serials = [d.serial for d in server.devices]
        with ProcessPoolExecutor(len(serials), mp_context=get_context("spawn")) as pool:
            done = list(pool.map(_parallel_worker, [server.port] * 4, serials, [budget] * 4))
        r["parallel4_steps_per_s"] = sum(s for s, _ in done) / max(t for _, t in done)
        r["single_steps_per_s"] = 1000 / r["adb_ms_per_step"]
    return r


# --- 2. recorder pairing at human pace ----------------------------------------------------------------
class NaiveRecorder:
    """Baseline: back-to-back screencap + dump; each action gets the last observation completed before it."""

    def __init__(self, phone, vd) -> None:
        self.phone, self.vd, self.obs, self.stop = phone, vd, [], threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            png = self.phone.screenshot()
            self.phone.dump()
            self.obs.append((time.monotonic(), png))

    def pair(self, downs_host: list[float]) -> list[bytes | None]:
        return [next((png for t, png in reversed(self.obs) if t < d), None) for d in downs_host]


class HostClockPhone:
    """The same AdbPhone without the device-stamped reads: the recorder falls back to host request times."""

    def __init__(self, phone) -> None:
        self._phone = phone

    def __getattr__(self, name):
        if name in ("screenshot_at", "dump_at"):
            raise AttributeError(name)
        return getattr(self._phone, name)


def _pace_once(name: str, seed: int, gap: float, naive: bool, host_clock: bool = False, stall: bool = False) -> dict:
    from collectors.operator import act_at_human_pace, score
    from collectors.recorder import Recorder
    from mockphone.adb import VirtualAdbServer
    from mockphone.tasks.registry import REGISTRY
    from phones.adb_phone import AdbPhone

    actions = [a for a in plans(seed, (name,))[0][1] if a.type != "terminate"]
    with VirtualAdbServer(phones=1) as server:
        vd = server.devices[0].configure(capture_latency=1.2, dump_latency=0.5, grab_jitter=0.03)
        task = REGISTRY[name](seed=seed)
        vd.phone.reset(seed)
        task.initialize_task(vd.phone)
        phone = AdbPhone(vd.serial, port=server.port, retry_delay=0.01)
        timer = threading.Timer(2.5, lambda: setattr(vd, "capture_latency", 3.0) or setattr(vd, "grab_jitter", 0.5))
        if stall:  # screencaps slow to 3 s and start 0.5 s late (a busy phone or adb link) mid-recording
            timer.start()
        if naive:
            rec = NaiveRecorder(phone, vd)
            rec.thread.start()
            downs: list[float] = []
            listener = vd.listen()
            truth, performed = act_at_human_pace(vd, actions, gaps=(gap, gap), seed=seed)
            rec.stop.set()
            rec.thread.join()
            lines = []
            while not listener.empty():
                lines.append(listener.get())
            vd.unlisten(listener)
            downs = _touch_downs(lines, vd)
            paired = rec.pair(downs)
            right = sum(p == t for p, t in zip(paired, [t for t, a in zip(truth, performed)
                                                         if a.type != "input_text"]))
            return {"right": right, "expected": len(downs), "flagged": 0, "wrong_unflagged": len(downs) - right}
        rec = Recorder(HostClockPhone(phone) if host_clock else phone, task.goal, task=name).start()
        truth, _ = act_at_human_pace(vd, actions, gaps=(gap, gap), seed=seed)
        episode = rec.stop(success=True)
        timer.cancel()
        assemble_s = episode.meta["capture"]["assemble_ms"] / 1000
        s = score(episode, truth)
        lags = [s.meta["frame_lag_ms"] for s in episode.steps if s.meta.get("frame_lag_ms") is not None]
        return {"right": s["right"], "expected": s["expected_steps"], "flagged": s["flagged"],
                "wrong_unflagged": s["wrong_unflagged"], "lags": lags, "assemble_s": assemble_s,
                "steps": s["steps"], "clock_error_ms": abs(episode.meta["clock"]["offset_s"] - vd._boot) * 1000}


def _touch_downs(lines: list[str], vd) -> list[float]:
    """Host times of each touch-down or key press in the raw lines (device clock + the known offset)."""
    from collectors.gestures import parse_line

    out = []
    for line in lines:
        p = parse_line(line)
        if p and ((p[3] == "BTN_TOUCH" and p[4] == "DOWN") or (p[2] == "EV_KEY" and p[3].startswith("KEY_")
                                                                and p[4] == "DOWN")):
            out.append(p[0] + vd._boot)
    return out


def bench_stall(gap: float, tasks) -> dict[str, dict]:
    """The recorder with phone-stamped frames vs host request times when screencaps stall mid-recording."""
    out = {}
    for label, host_clock in (("device_clock", False), ("host_clock", True)):
        runs = [_pace_once(n, s, gap, naive=False, host_clock=host_clock, stall=True) for n, s in tasks]
        exp = sum(r["expected"] for r in runs)
        out[label] = {"accuracy": sum(r["right"] for r in runs) / exp, "steps": exp,
                      "flagged": sum(r["flagged"] for r in runs),
                      "wrong_unflagged": sum(r["wrong_unflagged"] for r in runs)}
    return out


def bench_pairing(gaps, tasks) -> dict[str, dict]:
    out = {}
    for gap in gaps:
        new = [_pace_once(n, s, gap, naive=False) for n, s in tasks]
        old = [_pace_once(n, s, gap, naive=True) for n, s in tasks]
        host = [_pace_once(n, s, gap, naive=False, host_clock=True) for n, s in tasks]
        exp, right = sum(r["expected"] for r in new), sum(r["right"] for r in new)
        bexp, bright = sum(r["expected"] for r in old), sum(r["right"] for r in old)
        lags = [x for r in new for x in r["lags"]]
        out[f"{gap:.1f}s"] = {
            "accuracy": right / exp, "flagged": sum(r["flagged"] for r in new),
            "wrong_unflagged": sum(r["wrong_unflagged"] for r in new), "steps": exp,
            "median_frame_lag_ms": statistics.median(lags) if lags else None,
            "assemble_ms_per_step": 1000 * sum(r["assemble_s"] for r in new) / max(1, sum(r["steps"] for r in new)),
            "clock_error_ms_max": max(r["clock_error_ms"] for r in new),
            "host_clock_accuracy": sum(r["right"] for r in host) / max(1, sum(r["expected"] for r in host)),
            "host_clock_flagged": sum(r["flagged"] for r in host),
            "host_clock_wrong_unflagged": sum(r["wrong_unflagged"] for r in host),
            "baseline_accuracy": bright / max(1, bexp), "baseline_wrong_unflagged": sum(r["wrong_unflagged"] for r in old),
            "accuracy_ratio": (right / exp) / (bright / bexp) if bright else None}
    return out


# --- 3. farm throughput ---------------------------------------------------------------------------
def _farm(phones: int, kill_after: float | None, jobs: list[str], seeds: list[int]) -> tuple[float, dict]:
    from collectors.farm import collect_on_devices
    from datalake.lake import Lake
    from mockphone.adb import VirtualAdbServer

    with tempfile.TemporaryDirectory() as tmp, VirtualAdbServer(phones=phones) as server:
        lake = Lake.init(f"{tmp}/lake")
        if kill_after is not None:
            threading.Timer(kill_after, lambda: setattr(server.devices[0], "state", "offline")).start()
        t = time.perf_counter()
        report = collect_on_devices(lake, [], jobs, seeds=seeds, port=server.port, backoff=0.1, reconnects=2)
        wall = time.perf_counter() - t
    return wall, report.__dict__


def bench_farm(quick: bool) -> dict[str, float]:
    jobs, seeds = ["NotesCreate", "ContactsAdd", "ShopSearchPriceRange"], [0, 1] if quick else [0, 1, 2, 3]
    base_wall, base = _farm(3, None, jobs, seeds)
    wall, hurt = _farm(4, base_wall * 0.75 / 2, jobs, seeds)  # 4 phones finish in ~3/4 of the time: kill at half
    n = len(jobs) * len(seeds)
    return {"jobs": n, "three_healthy_eps_per_s": n / base_wall, "four_one_dies_eps_per_s": n / wall,
            "throughput_ratio": base_wall / wall, "four_one_dies_completed": hurt["outcomes"].get("success", 0),
            "four_one_dies_dropped": hurt.get("dropped", 0), "three_healthy_completed": base["outcomes"].get("success", 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short budgets and one pace task")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", choices=["protocol", "pairing", "stall", "farm"], help="run one part")
    args = parser.parse_args()
    results: dict[str, object] = {"cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                  else os.cpu_count()}
    if args.only in (None, "protocol"):
        results["protocol"] = bench_protocol(1.5 if args.quick else 6.0)
    if args.only in (None, "pairing"):
        results["pairing"] = bench_pairing((0.3, 0.5, 1.0), PACE_TASKS[:1] if args.quick else PACE_TASKS)
    if args.only in (None, "stall"):
        results["stall"] = bench_stall(0.4, PACE_TASKS[:1] if args.quick else PACE_TASKS)
    if args.only in (None, "farm"):
        results["farm"] = bench_farm(args.quick)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    if "protocol" in results:
        p = results["protocol"]
        print(f"direct MockPhone        {p['direct_ms_per_step']:7.1f} ms/step")
        print(f"AdbPhone (no settle)    {p['adb_ms_per_step']:7.1f} ms/step  overhead {p['adb_overhead_ratio']:.2f}x")
        print(f"AdbPhone (settled)      {p['adb_settled_ms_per_step']:7.1f} ms/step  "
              f"overhead {p['adb_settled_overhead_ratio']:.2f}x")
        print(f"4 virtual phones        {p['parallel4_steps_per_s']:7.1f} steps/s (1 phone: "
              f"{p['single_steps_per_s']:.1f}; {results['cpus']} CPUs)")
    for gap, r in results.get("pairing", {}).items():
        print(f"pairing, {gap} gaps      {100 * r['accuracy']:5.1f}% right of {r['steps']} ({r['flagged']} flagged, "
              f"{r['wrong_unflagged']} wrong unflagged), frame age {r['median_frame_lag_ms']} ms, assembly "
              f"{r['assemble_ms_per_step']:.1f} ms/step, clock error <= {r['clock_error_ms_max']:.1f} ms | baseline "
              f"{100 * r['baseline_accuracy']:5.1f}% ({r['baseline_wrong_unflagged']} wrong unflagged) -> "
              + (f"{r['accuracy_ratio']:.2f}x" if r["accuracy_ratio"] else "baseline got none right")
              + f" | host-clock frame times {100 * r['host_clock_accuracy']:5.1f}% ({r['host_clock_flagged']} flagged, "
              f"{r['host_clock_wrong_unflagged']} wrong unflagged)")
    for label, r in results.get("stall", {}).items():
        print(f"stalled capture, {label:12s} {100 * r['accuracy']:5.1f}% right of {r['steps']} ({r['flagged']} flagged, "
              f"{r['wrong_unflagged']} wrong unflagged)")
    if "farm" in results:
        f = results["farm"]
        print(f"farm {f['jobs']} jobs: 3 healthy {f['three_healthy_eps_per_s']:.2f} ep/s; 4 with one dying "
              f"{f['four_one_dies_eps_per_s']:.2f} ep/s ({f['four_one_dies_completed']} done, "
              f"{f['four_one_dies_dropped']} dropped attempt) -> {f['throughput_ratio']:.2f}x")


if __name__ == "__main__":
    main()
