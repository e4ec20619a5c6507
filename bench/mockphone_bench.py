"""Mock phone throughput on one core, against baselines measured in the same run.

    .venv/bin/python bench/mockphone_bench.py            # ~1 CPU-min (more on a loaded machine)
    .venv/bin/python bench/mockphone_bench.py --quick    # ~15 CPU-s

A step is ``observe()`` followed by ``act()``, driven by the oracle demonstrations of
every registered task (so the screens are the real mix: lists, keyboards, dialogs).
Figures:

1. full steps/s (PNG screenshot + XML + act) with the frame cache (``mockphone.frames``),
   and with the from-scratch renderer it replaced (``render.png``, the "before");
   tree-only steps/s (XML + act); raw steps/s (``observe(encoding="raw")``: pixels, no PNG, the
   last observation kept alive over the next step as an RL loop does, so copy-on-write is paid;
   target >= 200/s at 1080x2400);
2. the baseline: one Pillow PNG encode of the same 1080x2400 screens (every screen the
   steps show, pre-drawn), at the same compression level — the floor any
   screenshot-producing phone pays per step. Target: a full step costs <= 1.3 encodes;
3. reset: ``reset(seed)`` + ``initialize_task`` in ms (target <= 5 ms);
4. ``collect mock`` episodes/s with 1 and 2 workers (PNG screens, lake writes included),
   and its steps/s against an Android emulator's ~1 step/s.

5. state-diff verification per episode (start snapshot + ``is_successful``) in ms, CPU time
   (mean over the tasks, and the slowest task), against one such encode (target: below 1.0).

6. world generation per instance (``mockphone.world``: every section of a fresh seed's world, en-US
   and zh-CN, uncached) in CPU ms, against one PNG encode (target: below 1.0);
7. ``tasks generate`` throughput: instances/s solved and verified (start 0, oracle 1, every wrong
   ending < 1) on one core, and with the wrong endings skipped (``--quick``).

Timings are printed, never asserted; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time

from PIL import Image

from mockphone import render
from mockphone.layout import Display
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY


SMALL = Display(540, 1200, 210)  # the same layout at half the pixels in each direction (a common RL size)


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def oracle_actions(seed: int) -> list[tuple[str, list]]:
    """(task name, actions) recorded by running every oracle once (outside the timed part)."""
    plans = []
    for name, cls in REGISTRY.items():
        phone = MockPhone(seed=seed)
        task = cls(seed=seed)
        task.initialize_task(phone)
        plans.append((name, solve(phone, task)))
    return plans


def run_steps(plans, seed: int, modes: tuple[str, ...], passes: int) -> dict[str, tuple[int, float]]:
    """Steps of observe+act per mode, interleaved task by task so every mode sees the same machine load.

    Modes: png (frame cache), scratch (full repaint, the renderer before the cache), tree
    (XML only), raw (pixels, no PNG), encode (the baseline: one Pillow PNG encode of the
    same screen, pre-drawn). Time is this process's CPU time (``process_time``): one core's
    work, whatever else the shared machine runs.
    """
    totals = {m: [0, 0.0] for m in modes}
    for _ in range(passes):
        for name, actions in plans:
            images = _images(name, actions, seed) if "encode" in modes else []
            for mode in modes:
                start = time.process_time()
                totals[mode][0] += _steps(name, actions, seed, mode, images)
                totals[mode][1] += time.process_time() - start
    return {m: (n, t) for m, (n, t) in totals.items()}


def _images(name: str, actions: list, seed: int) -> list[Image.Image]:
    phone = MockPhone(seed=seed)
    REGISTRY[name](seed=seed).initialize_task(phone)
    out = []
    for action in actions:
        out.append(Image.open(io.BytesIO(render.png(phone, phone.root))).convert("RGB"))
        phone.act(action)
    return out


def _steps(name: str, actions: list, seed: int, mode: str, images: list) -> int:
    if mode == "encode":
        for image in images:
            image.save(io.BytesIO(), "PNG", compress_level=render.COMPRESS_LEVEL)
        return len(images)
    phone = MockPhone(seed=seed, display=SMALL if mode == "raw_small" else None)
    REGISTRY[name](seed=seed).initialize_task(phone)
    kept = None  # the last observation stays alive over the next act(), as in a real loop (raw: copy-on-write)
    for action in actions:
        if mode == "png":
            phone.observe()
        elif mode == "scratch":
            render.png(phone, phone.root)
            phone.ui_tree()
        elif mode in ("raw", "raw_small"):
            kept = phone.observe(encoding="raw")
        else:
            phone.ui_tree()
        phone.act(action)
    del kept
    return len(actions)


def reset_ms(plans, seed: int, rounds: int = 3) -> float:
    phone = MockPhone(seed=seed)
    n, start = 0, time.process_time()
    for _ in range(rounds):
        for name, _ in plans:
            phone.reset(seed)
            REGISTRY[name](seed=seed).initialize_task(phone)
            n += 1
    return 1000 * (time.process_time() - start) / n


def collect_rate(workers: int, episodes: int) -> dict:
    from collectors.mock_collect import MockCollectSpec, collect_mock
    from datalake.lake import Lake

    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.init(os.path.join(tmp, "lake"))
        spec = MockCollectSpec(tasks="category:single-app", episodes=episodes, workers=workers, perturb="real-like")
        report = collect_mock(lake.uri, spec)
        steps = lake.sql("select count(*) as n from steps").to_pylist()[0]["n"]
    return {"episodes_per_s": round(report.episodes_per_s, 2), "steps_per_s": round(steps / report.elapsed_s, 1),
            "vs_emulator_1_step_per_s": round(steps / report.elapsed_s, 1), "episodes": report.episodes}


def verifier_cost(plans, seed: int, repeats: int = 20) -> tuple[float, float]:
    """State-diff verification per episode, ms (mean and slowest task): the start snapshot plus
    ``is_successful`` at the end (snapshot of every app, system settings, clipboard and files, the
    diff, the task's own check)."""
    from mockphone.tasks import statediff

    costs = []
    for name, actions in plans:
        phone = MockPhone(seed=seed)
        task = REGISTRY[name](seed=seed)
        task.initialize_task(phone)
        for action in actions:
            phone.act(action)
        start = time.process_time()  # CPU time, the same clock as the encode baseline
        for _ in range(repeats):
            statediff.snapshot(phone)
            task.is_successful(phone)
        costs.append(1000 * (time.process_time() - start) / repeats)
    return sum(costs) / len(costs), max(costs)


def world_ms(seeds: range) -> float:
    """CPU ms to build every section of a fresh world (no cache), averaged over seeds and both locales."""
    from mockphone.world import World

    start, n = time.process_time(), 0
    for seed in seeds:
        for locale in ("en-US", "zh-CN"):
            World(seed + 10_000, locale).to_json()  # seeds nobody cached
            n += 1
    return 1000 * (time.process_time() - start) / n


def generate_rate(seeds: range, wrong_endings: bool) -> float:
    """Instances/s of ``tasks generate`` on one core (every template x ``seeds``, verified)."""
    from mockphone.tasks import instances, registry

    classes = registry.select("all")
    start = time.process_time()
    instances.generate(classes, seeds, wrong_endings=wrong_endings)
    return len(classes) * len(seeds) / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run")
    args = parser.parse_args()
    plans = oracle_actions(seed=0)
    sample = plans[::8] if args.quick else plans[::2]  # every 8th / every other task: all apps, dialogs, keyboards
    collect = {w: collect_rate(w, 6 if args.quick else 24) for w in (1, 2)}  # before pinning: 2 workers need 2 cores
    pin_one_core()
    rates = run_steps(sample, 0, ("png", "scratch", "raw", "encode"), 1)
    rates.update(run_steps(sample, 0, ("tree", "raw_small"), 2))
    full, scratch, tree, raw, base = (n / t for n, t in (rates[m] for m in ("png", "scratch", "tree", "raw", "encode")))
    verify_ms, verify_max_ms = verifier_cost(sample, 0, repeats=5 if args.quick else 20)
    world = world_ms(range(10 if args.quick else 40))
    generated = generate_rate(range(1 if args.quick else 2), True)
    generated_quick = generate_rate(range(2 if args.quick else 4), False)
    print(json.dumps({
        "tasks": len(sample), "oracle_steps": sum(len(a) for _, a in sample),
        "observe_act_steps_per_cpu_s": round(full, 1), "observe_act_scratch_steps_per_cpu_s": round(scratch, 1),
        "tree_act_steps_per_cpu_s": round(tree, 1), "raw_act_steps_per_cpu_s": round(raw, 1),
        "raw_act_steps_per_cpu_s_540x1200": round(rates["raw_small"][0] / rates["raw_small"][1], 1),
        "baseline_png_encodes_per_cpu_s_same_screens": round(base, 1),
        "step_cost_in_png_encodes": round(base / full, 3), "step_cost_in_png_encodes_before": round(base / scratch, 3),
        "reset_cpu_ms": round(reset_ms(plans, 0), 2),
        "collect_mock_1_worker": collect[1], "collect_mock_2_workers": collect[2],
        "state_diff_verification_ms_per_episode": round(verify_ms, 3),
        "state_diff_verification_ms_slowest_task": round(verify_max_ms, 3), "png_encode_ms": round(1000 / base, 3),
        "ratio_verification_vs_png_encode": round(verify_ms * base / 1000, 3),
        "world_generation_ms_per_instance": round(world, 3), "ratio_world_generation_vs_png_encode":
            round(world * base / 1000, 3),
        "tasks_generate_instances_per_cpu_s": round(generated, 2),
        "tasks_generate_quick_instances_per_cpu_s": round(generated_quick, 2),
    }, indent=2))


if __name__ == "__main__":
    main()
