"""What a zh-CN phone costs against an en-US one, measured in the same run on one core.

    .venv/bin/python bench/locale_bench.py            # ~1 CPU-min (more on a loaded machine)
    .venv/bin/python bench/locale_bench.py --quick    # a few CPU-s

A step is ``observe()`` (PNG + XML) then ``act()``, replaying each task's oracle on a fresh
phone of each locale; the zh-CN screens are the same screens translated (catalog lookups
before layout, CJK font fallback, wrapping between ideographs). Figures: steps/s per locale
and the zh/en ratio (the baseline is en-US, run interleaved with zh-CN so load drifts hit
both), and ``fonts.wrap`` calls/s on uncached Chinese against English paragraphs.
Timings are printed, never asserted; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from mockphone import fonts
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY


def _plans(names: list[str]) -> list[tuple[str, list]]:
    out = []
    for name in names:
        phone = MockPhone(seed=0, locale="zh-CN")
        task = REGISTRY[name](seed=0)
        task.initialize_task(phone)
        out.append((name, solve(phone, task)))
    return out


def _replay(name: str, actions: list, locale: str) -> tuple[int, float]:
    phone = MockPhone(seed=0, locale=locale)
    REGISTRY[name](seed=0).initialize_task(phone)
    start = time.perf_counter()
    for action in actions:
        phone.observe()
        phone.act(action)
    return len(actions), time.perf_counter() - start


def steps_per_s(plans, passes: int) -> dict[str, float]:
    totals = {"en-US": [0, 0.0], "zh-CN": [0, 0.0]}
    for _ in range(passes):
        for name, actions in plans:
            for locale in ("en-US", "zh-CN"):  # interleaved: the same load for both
                n, s = _replay(name, actions, locale)
                totals[locale][0] += n
                totals[locale][1] += s
    return {k: n / s for k, (n, s) in totals.items()}


def wrap_per_s(rounds: int) -> dict[str, float]:
    rng = random.Random(0)
    out = {}
    for label, make in (("en", lambda: " ".join(rng.choice(("phone", "settings", "message", "a", "network"))
                                                for _ in range(30))),
                        ("zh", lambda: "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(60)))):
        texts = [make() + str(i) for i in range(rounds)]  # distinct: no lru_cache hits
        start = time.perf_counter()
        for t in texts:
            fonts.wrap(t, 42, 900)
        out[label] = rounds / (time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    names = sorted(REGISTRY)[:: 12 if args.quick else 3]
    plans = _plans(names)
    rates = steps_per_s(plans, 1 if args.quick else 2)
    print(f"steps/s (observe PNG+XML, act) over {len(plans)} oracle demos: en-US {rates['en-US']:.1f}, "
          f"zh-CN {rates['zh-CN']:.1f}; zh/en ratio {rates['zh-CN'] / rates['en-US']:.2f}")
    wraps = wrap_per_s(200 if args.quick else 1000)
    print(f"fonts.wrap calls/s (uncached paragraphs, 900 px): en {wraps['en']:.0f}, zh {wraps['zh']:.0f}; "
          f"zh/en ratio {wraps['zh'] / wraps['en']:.2f}")
    print("(shared machine: other engineers' jobs run alongside; compare the ratios)")


if __name__ == "__main__":
    main()
