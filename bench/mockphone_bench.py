"""Mock phone throughput: steps/s of observe+act on one core, against a baseline in the same run.

    .venv/bin/python bench/mockphone_bench.py            # ~20 s
    .venv/bin/python bench/mockphone_bench.py --quick    # a few seconds

A step is ``observe()`` (render PNG + dump uiautomator XML) followed by ``act()``,
driven by the oracle demonstrations of every registered task (so the screens are
the real mix: lists, keyboards, dialogs). Two figures:

1. full steps/s (screenshot + XML + act), and tree-only steps/s (XML + act, the cost
   when a policy reads only the tree);
2. the baseline: PNG-encoding a pre-drawn 1080x2400 screen with Pillow at the same
   compression level — the floor any screenshot-producing phone pays per step.

The ratio (mockphone steps/s ÷ baseline encodes/s) says how close rendering a whole
phone gets to just writing one PNG. It also reports the state-diff verification cost per
episode (start snapshot + ``is_successful``) against one such encode (target: below 1.0).
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time

from PIL import Image, ImageDraw

from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY


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


def run_steps(plans, seed: int, screenshot: bool, budget_s: float) -> tuple[int, float]:
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget_s:
        for name, actions in plans:
            phone = MockPhone(seed=seed)
            task = REGISTRY[name](seed=seed)
            task.initialize_task(phone)
            for action in actions:
                if screenshot:
                    phone.observe()
                else:
                    phone.ui_tree()
                phone.act(action)
                steps += 1
            if time.perf_counter() - start >= budget_s:
                break
    return steps, time.perf_counter() - start


def baseline(budget_s: float) -> tuple[int, float]:
    img = Image.new("RGB", (1080, 2400), "#ffffff")
    draw = ImageDraw.Draw(img)
    for i in range(20):  # a list-like screen, so the PNG is not trivially small
        draw.rectangle((40, 200 + i * 100, 1040, 270 + i * 100), fill=(230, 230 - i, 240))
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget_s:
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=1)
        n += 1
    return n, time.perf_counter() - start


def verifier_cost(plans, seed: int, repeats: int = 20) -> float:
    """State-diff verification per episode, ms: the start snapshot plus ``is_successful`` at the end
    (snapshot of every app, system settings, clipboard and files, the diff, the task's own check)."""
    from mockphone.tasks import statediff

    total, episodes = 0.0, 0
    for name, actions in plans:
        phone = MockPhone(seed=seed)
        task = REGISTRY[name](seed=seed)
        task.initialize_task(phone)
        for action in actions:
            phone.act(action)
        start = time.perf_counter()
        for _ in range(repeats):
            statediff.snapshot(phone)
            task.is_successful(phone)
        total += (time.perf_counter() - start) / repeats
        episodes += 1
    return 1000 * total / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run")
    args = parser.parse_args()
    budget = 2.0 if args.quick else 8.0
    pin_one_core()
    plans = oracle_actions(seed=0)
    full_n, full_t = run_steps(plans, 0, True, budget)
    tree_n, tree_t = run_steps(plans, 0, False, budget)
    base_n, base_t = baseline(budget)
    full, tree, base = full_n / full_t, tree_n / tree_t, base_n / base_t
    verify_ms = verifier_cost(plans, 0)
    print(json.dumps({
        "tasks": len(plans), "oracle_steps": sum(len(a) for _, a in plans),
        "observe_act_steps_per_s": round(full, 1), "tree_act_steps_per_s": round(tree, 1),
        "baseline_png_encodes_per_s": round(base, 1),
        "ratio_observe_act_vs_png_encode": round(full / base, 3),
        "ratio_tree_act_vs_png_encode": round(tree / base, 3),
        "state_diff_verification_ms_per_episode": round(verify_ms, 3), "png_encode_ms": round(1000 / base, 3),
        "ratio_verification_vs_png_encode": round(verify_ms * base / 1000, 3),
    }, indent=2))


if __name__ == "__main__":
    main()
