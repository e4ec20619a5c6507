"""Training benchmarks: does the data pipeline keep the trainer fed, and how fast is SFT on the tiny model?

    .venv/bin/python bench/training_bench.py            # full-size screens (1080x2400), ~1-2 minutes on 2 cores
    .venv/bin/python bench/training_bench.py --quick    # small screens, small run
    .venv/bin/python bench/training_bench.py --experiment [--quick]   # the demo's experiment and its targets
    .venv/bin/python bench/training_bench.py --online   # GRPO's played online episodes against offline step rewards
    (PHONELOOP_EXP_REPORT=DIR keeps report.md, report.json with every episode's replies, and curves.png)

In one run, on one dataset version built from oracle episodes on mock phones:

1. prepare: loading the ``sft`` export with ``datasets`` and capping every screenshot at
   the tiny model's ``max_pixels`` (done once per dataset version; ``datasets`` caches it);
2. loader: samples/s the trainer's own DataLoader delivers (the SFT collator: chat
   template, tokenisation, assistant masks, image processing), iterated without training;
3. trainer: samples/s ``SFTTrainer`` consumes while training the tiny model (forward,
   backward, optimizer step), and its steps/s.

Target: loader >= 5x trainer. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def build_lake(root: str, episodes: int, width: int, height: int):
    from curation.build import curate
    from curation.recipe import parse_recipe
    from datalake.lake import Lake
    from datalake.types import Action, Device, Episode, Step
    from mockphone.layout import Display
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.tasks.registry import select

    lake = Lake.init(os.path.join(root, "lake"))
    phone = MockPhone(display=Display(width, height))
    tasks = select("complexity:<=3")
    out = []
    k = 0
    while len(out) < episodes:
        cls = tasks[k % len(tasks)]
        k += 1
        steps = []
        try:
            phone.reset(k)
            task = cls(seed=k)
            task.initialize_task(phone)
            for action in task.oracle(UI(phone)):
                steps.append(Step(phone.observe(), action))
                phone.act(action)
            steps.append(Step(phone.observe(), Action("terminate", status="success")))
            out.append(Episode(instruction=task.goal, source="oracle", device=Device(width, height, kind="mock"),
                               app=cls.app_names[0], task=cls.name(), outcome="success", verified_by="verifier",
                               steps=tuple(steps)))
        except Exception:  # a task this screen size cannot run: take the next one
            continue
    lake.write_episodes(out)
    recipe = ("name: bench\nselect: SELECT episode_id FROM episodes\n"
              "split: {by: episode, seed: 0, fractions: {train: 1.0}}\nexports:\n  - {format: sft}\n")
    return lake, curate(lake, parse_recipe(recipe))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small screens and a short run")
    parser.add_argument("--experiment", action="store_true",
                        help="the learning experiment: random vs SFT vs SFT->GRPO on held-out seeds, targets printed")
    parser.add_argument("--online", action="store_true",
                        help="cost of scoring a completion by playing its episode vs by the offline step rewards")
    opts = parser.parse_args()
    if opts.experiment:
        return experiment(opts.quick)
    if opts.online:
        return online()
    episodes, (width, height), steps = (12, (360, 800), 20) if opts.quick else (30, (1080, 2400), 60)
    root = tempfile.mkdtemp(prefix="phoneloop-train-bench-")
    os.environ.setdefault("HF_HOME", os.path.join(root, "hf"))

    t = time.perf_counter()
    lake, dv = build_lake(root, episodes, width, height)
    rows = dv.exports["formats"]["sft"]["train"]["rows"]
    print(f"dataset {dv.ref}: {rows} sft rows from {episodes} oracle episodes on {width}x{height} mock phones "
          f"({time.perf_counter() - t:.1f} s to collect and curate)")

    from training.data import cap_images, open_export
    from training.sft import SFTRun, prepare_sft
    from training.tiny import TINY_MAX_PIXELS, tiny_model

    tiny_model(lake.uri)
    t = time.perf_counter()
    cap_images(open_export(lake, dv.ref, "sft").load().select_columns(["messages", "images"]), TINY_MAX_PIXELS)
    prepare = rows / (time.perf_counter() - t)

    job = prepare_sft(lake, SFTRun(dataset=dv.ref, output="bench-sft", max_steps=steps, batch_size=4,
                                   learning_rate=1e-3, save_steps=10_000, logging_steps=10))
    loader = job.trainer.get_train_dataloader()
    t, delivered = time.perf_counter(), 0
    for _ in range(2):
        for batch in loader:
            delivered += int(batch["input_ids"].shape[0])
    loader_rate = delivered / (time.perf_counter() - t)

    result = job.trainer.train()
    consume = result.metrics["train_samples_per_second"]
    steps_per_s = result.metrics["train_steps_per_second"]

    print(f"prepare (once per version): {prepare:8.1f} samples/s  (load export + cap images at {TINY_MAX_PIXELS} px)")
    print(f"loader (collator included):  {loader_rate:8.1f} samples/s")
    print(f"trainer (tiny model, CPU):   {consume:8.1f} samples/s   {steps_per_s:.2f} SFT steps/s at batch 4")
    ratio = loader_rate / consume
    print(f"loader / trainer = {ratio:.1f}x  (target >= 5x: {'met' if ratio >= 5 else 'NOT met'})")
    shutil.rmtree(root, ignore_errors=True)


def online() -> None:
    """Seconds to score one GRPO completion: a played online episode (``EpisodeReward``: the completion, then
    the policy's greedy continuation to the episode's end, then the verifier) against the offline step rewards
    on the same prompts (the baseline). The policy is the random tiny model, whose continuations never
    terminate: every episode runs its whole budget (the oracle's length + 2), the worst case."""
    from datalake.lake import Lake
    from training import rewards
    from mockphone.tasks.sets import DEMO_TASKS
    from training.infer import load_checkpoint
    from training.mock_episodes import EpisodeFormat, EpisodeReward, online_rows

    root = tempfile.mkdtemp(prefix="phoneloop-online-bench-")
    try:
        lake = Lake.init(os.path.join(root, "lake"))
        fmt = EpisodeFormat()
        t = time.perf_counter()
        rows = online_rows(list(DEMO_TASKS), len(DEMO_TASKS), fmt, max_pixels=8192)
        build = (time.perf_counter() - t) / len(rows)
        reward = EpisodeReward(fmt, max_new_tokens=40)
        reward.policy = load_checkpoint(lake, "tiny")
        completions = ['{"type":"tap","element":1}'] * len(rows)
        columns = {k: [r[k] for r in rows] for k in ("task", "seed", "prefix", "budget")}
        t = time.perf_counter()
        reward([r["prompt"] for r in rows], completions, **columns)
        played = (time.perf_counter() - t) / len(rows)
        steps = sum(r.steps for r in reward.episodes) / len(reward.episodes)
        offline = {"target_action": ['{"type":"tap","x":540,"y":1200}'] * len(rows), "target_box": [None] * len(rows),
                   "width": [1080] * len(rows), "height": [2400] * len(rows), "coords": ["rel1000"] * len(rows),
                   "action_format": ["json"] * len(rows)}
        t, repeats = time.perf_counter(), 20
        for _ in range(repeats):
            for fn in rewards.STEP_REWARDS:
                fn([r["prompt"] for r in rows], completions, **offline)
        step = (time.perf_counter() - t) / (repeats * len(rows))
        print(f"online row (prompt of a fresh seed's screen): {build * 1000:8.1f} ms to build")
        print(f"played episode reward:  {played * 1000:8.1f} ms per completion ({steps:.1f} steps, the model's "
              f"greedy replies included)")
        print(f"offline step rewards:   {step * 1000:8.3f} ms per completion (all {len(rewards.STEP_REWARDS)}: the "
              f"baseline)")
        print(f"played / offline = {played / step:.0f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def experiment(quick: bool) -> None:
    """The demo's round as a measured experiment: random vs SFT vs SFT->GRPO on held-out seeds (targets printed).

    Runs exactly what ``phoneloop demo`` runs (``phoneloop.demo.experiment_config``) on a fresh lake; the
    baseline of the success figures is the random policy measured in the same run on the same episodes."""
    from datalake.lake import Lake
    from phoneloop.demo import experiment_config, import_sample
    from training.experiment import run_experiment, write_report

    cfg, sizes = experiment_config(quick)
    root = tempfile.mkdtemp(prefix="phoneloop-exp-")
    try:
        print(f"(the machine is shared with other engineers: wall times are loaded figures; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start)")
        lake = Lake.init(os.path.join(root, "lake"))
        import_sample(lake)  # as `phoneloop demo` does: GRPO's offline rows include its real-phone episodes
        report = run_experiment(lake, cfg, **sizes)
        folder = os.environ.get("PHONELOOP_EXP_REPORT") or tempfile.mkdtemp(prefix="phoneloop-exp-report-")
        print(f"table and curves: {write_report(report, folder)}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
