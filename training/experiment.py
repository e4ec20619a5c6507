"""A measured learning experiment on mock phones: oracle demos on training seeds, evaluation on held-out seeds.

The embedded default learns from the element-list format (``curation.elements``): the
instruction, the previous actions and the screen's numbered UI elements beside a small
screenshot, answering with element-number actions. The steps, each one library call:

1. ``write_demonstrations``: oracle episodes of each template on the training seeds,
   written to the lake as a collector would (verified by the task's own verifier);
2. ``curate_demos``: a dataset version whose sft and grpo exports use ``elements: true``;
3. SFT with ``training.sft.run_sft`` (the real TRL path, the tiny Qwen3-VL model);
4. GRPO after it (``grpo_run``), the Real+Mock recipe: offline step rewards on the grpo
   export of the demonstrations and the lake's real-phone episodes, mixed with online
   episodes of the same templates on mock phones (fresh seeds), whose reward is the task
   verifier: played episodes for the ``json`` default (``training.mock_episodes``), multi-turn
   tool-call episodes for ``qwen3vl``;
5. ``evaluate`` (``training.mock_episodes.run_episode``): every template on the *held-out*
   seeds, an actor per policy (random, a checkpoint), each step's reply parsed with the
   element list of that very screen and executed on a fresh mock phone; success is the task
   verifier's, never the model's claim. ``wilson`` gives 95% intervals, ``paired`` the per-episode paired
   difference of two policies on the same (template, seed) episodes.

The evaluation is a small in-process loop (one model loaded, nothing written to the
lake); ``phoneloop rollout --policy demo-sft`` runs the same checkpoints through the
rollout runner with the same prompt (the format is recorded with the model,
``training.prompt_format``). ``phoneloop demo`` runs this experiment as its round.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from datalake.stats import paired_difference, wilson  # noqa: F401  (wilson: also imported from here)
from datalake.types import Action
from training.mock_episodes import (EXTRA_STEPS, ONLINE_SEED, Actor, EpisodeFormat, EpisodeResult, oracle_demo,
                                    oracle_length, run_episode)

if TYPE_CHECKING:
    from training.grpo import GRPORun

__all__ = ["Actor", "EpisodeResult", "ExperimentConfig", "evaluate", "oracle_demo", "run_episode", "run_experiment"]


@dataclass(frozen=True)
class ExperimentConfig:
    tasks: tuple[str, ...]  # template names from mockphone's registry
    train_seeds: tuple[int, ...] = tuple(range(8))  # measured: 4 seeds gave SFT 17/48, 8 (balanced) 33/48
    eval_seeds: tuple[int, ...] = (100, 101, 102)  # held out: never demonstrated
    action_format: str = "json"  # json (learns best here) | qwen3vl (tool calls, as online GRPO episodes speak)
    coords: str = "rel1000"
    history: int = 4
    extra_steps: int = EXTRA_STEPS  # an episode may run this many steps past the oracle's length
    grpo_temperature: float = 1.5  # sampling temperature of GRPO's groups (the SFT policy is peaked)

    def __post_init__(self) -> None:
        overlap = set(self.train_seeds) & set(self.eval_seeds)
        if overlap:
            raise ValueError(f"evaluation seeds must be held out; seeds {sorted(overlap)} are also training seeds")
        if not self.tasks:
            raise ValueError("an experiment needs at least one task template")
        online = [s for s in (*self.train_seeds, *self.eval_seeds) if s >= ONLINE_SEED]
        if online:
            raise ValueError(f"seeds from {ONLINE_SEED} are GRPO's online episodes; {online} cannot be used here")

    @property
    def format(self) -> EpisodeFormat:
        return EpisodeFormat(self.action_format, self.coords, self.history)

    @property
    def params(self) -> dict:
        return self.format.params


def write_demonstrations(lake, cfg: ExperimentConfig) -> int:
    episodes = [oracle_demo(t, s) for t in cfg.tasks for s in cfg.train_seeds]
    lake.write_episodes(episodes)
    return len(episodes)


def curate_demos(lake, cfg: ExperimentConfig, name: str, real: bool = False) -> str:
    """A dataset version of the demonstrations with element-list sft and grpo exports; returns NAME@vN.
    ``real``: the lake's successful real-phone episodes too, grpo export only (GRPO's offline step
    rewards on real phones)."""
    from curation.build import curate
    from curation.recipe import parse_recipe

    tasks = ", ".join(f"'{t}'" for t in cfg.tasks)
    where = f"(source = 'oracle' AND task IN ({tasks}))"
    if real:
        where += " OR (phone = 'real' AND outcome = 'success')"
    kinds = ("grpo",) if real else ("sft", "grpo")  # the real-phone version feeds GRPO only
    exports = "".join(f"  - {{format: {kind}, coords: {cfg.coords}, action_format: {cfg.action_format}, "
                      f"history: {cfg.history}, elements: true}}\n" for kind in kinds)
    ops = "ops:\n  - op: redact\n    blur: true\n" if real else ""  # real-phone screens leave redacted
    recipe = (f"name: {name}\nselect: SELECT episode_id FROM episodes WHERE {where}\n{ops}"
              "split: {by: episode, seed: 0, fractions: {train: 1.0}}\nexports:\n" + exports)
    return curate(lake, parse_recipe(recipe)).ref


def real_demonstrations(lake) -> int:
    """Successful real-phone episodes in the lake (``phoneloop demo`` and the benchmark import the
    bundled sample first: ``phoneloop.demo.import_sample``)."""
    lake.invalidate()
    return lake.sql("SELECT count(*) AS n FROM episodes WHERE phone = 'real' AND outcome = 'success'"
                    ).to_pylist()[0]["n"]


def evaluate(actor: Actor, cfg: ExperimentConfig, seeds: tuple[int, ...] | None = None,
             tasks: tuple[str, ...] | None = None, env: str = "mock") -> list[EpisodeResult]:
    """Every template (``cfg.tasks`` by default) on every (held-out by default) seed, on ``env`` phones (mock:
    verified; real-like: judged); budget = the oracle's length + ``extra_steps``."""
    out = []
    for task_name in tasks if tasks is not None else cfg.tasks:
        budget = oracle_length(task_name, cfg.train_seeds[0]) + cfg.extra_steps
        for seed in seeds if seeds is not None else cfg.eval_seeds:
            out.append(run_episode(actor, cfg.format, task_name, seed, budget, env=env))
    return out


def random_actor(cfg: ExperimentConfig, seed: int = 0) -> Actor:
    """A uniform policy over the screen's elements and the non-pointing actions (the baseline)."""
    from curation.elements import format_with_marks

    rng = random.Random(seed)

    def act(messages, images, items, size) -> str:
        choices = [Action("tap", x=m.center[0], y=m.center[1]) for m in items]
        choices += [Action("key", key=k) for k in ("back", "home", "enter")]
        choices += [Action("scroll", direction=d) for d in ("up", "down")]
        choices += [Action("terminate", status="success"), Action("input_text", text="hello")]
        return format_with_marks(rng.choice(choices), cfg.action_format, cfg.coords, size, items)

    return act


def checkpoint_actor(policy, *, max_new_tokens: int = 48) -> Actor:
    """Greedy replies of a ``training.infer.CheckpointPolicy``."""
    def act(messages, images, items, size) -> str:
        return policy.generate(messages, images, max_new_tokens=max_new_tokens)

    return act



def paired(a: list[EpisodeResult], b: list[EpisodeResult], resamples: int = 2000, seed: int = 0) -> dict:
    """Mean of b - a over the same (task, seed) episodes, with a bootstrap 95% interval
    (``datalake.stats.paired_difference``, the interval ``phoneloop eval`` and the loop report too)."""
    d = paired_difference({(r.task, r.seed): r.success for r in a}, {(r.task, r.seed): r.success for r in b},
                          resamples=resamples, seed=seed)
    if not d["pairs"]:
        return {"n": 0, "diff": 0.0, "low": 0.0, "high": 0.0}
    return {"n": d["pairs"], "diff": d["diff"], "low": d["low"], "high": d["high"], "p_value": d["p_value"]}


def summary(results: list[EpisodeResult]) -> dict:
    n = len(results)
    k = sum(r.success for r in results)
    low, high = wilson(k, n)
    steps = sum(r.steps for r in results)
    return {"episodes": n, "successes": k, "success": k / n if n else 0.0, "low": low, "high": high,
            "parse_rate": sum(r.parsed for r in results) / steps if steps else 0.0}


def grpo_run(cfg: ExperimentConfig, ref: str, steps: int, online_prompts: int,
             offline_prompts: int | None = None) -> "GRPORun":
    """GRPO after SFT, the Real+Mock recipe: offline step rewards on ``ref`` (the demonstrations and the
    lake's successful real-phone episodes, ``demo-rl``) mixed with online episodes of the same templates
    on mock phones, scored by their verifiers. With the ``json`` default the online rows are played
    episodes (``training.mock_episodes``: prompts exactly like SFT's, the completion and the policy's own
    continuation on a fresh seed); with ``qwen3vl`` they are multi-turn ``mobile_use`` tool-call episodes."""
    from training.grpo import GRPORun

    return GRPORun(dataset=ref, output="demo-grpo", model="demo-sft", max_steps=steps, num_generations=8,
                   batch_size=8, temperature=cfg.grpo_temperature, learning_rate=1e-5, max_completion_tokens=40,
                   seed=0, env="mock", mix=True, tasks=",".join(cfg.tasks), online_prompts=online_prompts,
                   offline_prompts=offline_prompts, max_turns=5)


def run_experiment(lake, cfg: ExperimentConfig, *, sft_steps: int = 100, grpo_steps: int = 4,
                   learning_rate: float = 3e-3, online_prompts: int = 32, offline_prompts: int | None = None,
                   echo: Callable[[str], None] = print) -> dict:
    """Random, SFT and SFT->GRPO on the held-out seeds; the figures the issue's targets name."""
    import time

    from training.grpo import run_grpo
    from training.infer import load_checkpoint
    from training.sft import SFTRun, run_sft

    start, cpu_start, load_start = time.perf_counter(), time.process_time(), load_average()
    phases: dict[str, float] = {}
    clock = [start]

    def lap(name: str) -> None:
        now = time.perf_counter()
        phases[name] = round(now - clock[0], 1)
        clock[0] = now

    threads = cpu_threads()
    write_demonstrations(lake, cfg)
    ref = curate_demos(lake, cfg, "demo")
    lap("demonstrations")
    echo(f"demonstrations: {len(cfg.tasks)} templates x {len(cfg.train_seeds)} training seeds -> {ref}")
    sft = run_sft(lake, SFTRun(dataset=ref, output="demo-sft", model="tiny", max_steps=sft_steps, batch_size=4,
                               learning_rate=learning_rate, warmup_steps=max(1, sft_steps // 20),
                               lr_scheduler="cosine", save_steps=100_000, balance="task"))
    lap("sft")
    echo(f"SFT: {sft_steps} steps, loss {sft.metrics.get('first_loss')} -> {sft.metrics.get('last_loss')}")
    real = real_demonstrations(lake)
    rl_ref = curate_demos(lake, cfg, "demo-rl", real=True) if real else ref
    echo(f"GRPO prompts: {rl_ref} (the demonstrations + {real} successful real-phone episode(s))")
    run = grpo_run(cfg, rl_ref, grpo_steps, online_prompts, offline_prompts)
    grpo = run_grpo(lake, run)
    lap("grpo")
    online = grpo.metrics.get("rewards/episode_reward/mean") or []
    echo(f"SFT->GRPO: {grpo_steps} steps (offline step rewards + online mock episodes), reward "
         f"{grpo.metrics['reward']}, online episodes' verifier success by step {online}")
    results = {}
    for name, actor in (("random", lambda: random_actor(cfg)),
                        ("sft", lambda: checkpoint_actor(load_checkpoint(lake, "demo-sft"))),
                        ("grpo", lambda: checkpoint_actor(load_checkpoint(lake, "demo-grpo")))):
        results[name] = evaluate(actor(), cfg)
        lap(f"eval_{name}")
    report = {name: summary(r) for name, r in results.items()}
    report.update(sft_vs_random=paired(results["random"], results["sft"]),
                  grpo_vs_sft=paired(results["sft"], results["grpo"]),
                  grpo_groups_with_variance=groups_with_variance(grpo.metrics),
                  sft_losses=sft.metrics.get("losses"), grpo_reward=grpo.metrics.get("reward"),
                  grpo_frac_zero_std=grpo.metrics.get("frac_reward_zero_std"),
                  grpo_rewards={k: v for k, v in grpo.metrics.items() if k.startswith("rewards/")},
                  episodes={name: [_brief(e) for e in r] for name, r in results.items()},
                  wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start, phases=phases,
                  grpo_dataset=rl_ref, grpo_real_episodes=real,
                  torch_threads=threads,
                  load_average=(load_start, load_average()))
    for line in report_lines(report):
        echo(line)
    return report


def load_average() -> float:
    """The 1-minute load average (reports give it beside wall times)."""
    import os

    return round(os.getloadavg()[0], 2)


def groups_with_variance(metrics: dict) -> float | None:
    """The share of a GRPO run's logged steps whose groups had reward variance (1 - TRL's frac_reward_zero_std)."""
    zero = [v for v in metrics.get("frac_reward_zero_std", []) if v is not None]
    return 1 - sum(zero) / len(zero) if zero else None


def _brief(r: EpisodeResult) -> dict:
    """One evaluated episode for the report (to read the failures one by one)."""
    return {"task": r.task, "seed": r.seed, "success": r.success, "steps": r.steps, "parsed": r.parsed,
            "replies": [text[:160] for text in r.replies]}


def cpu_threads() -> int:
    """Torch threads on CPU for what runs next, chosen from the cores idle now (``training.common.choose_threads``)."""
    from training.common import choose_threads

    return choose_threads()


def report_lines(report: dict) -> list[str]:
    lines = ["policy   success  95% interval   parse rate"]
    for name in ("random", "sft", "grpo"):
        s = report[name]
        lines.append(f"{name:8} {s['successes']:3}/{s['episodes']:<3}  [{s['low']:.2f}, {s['high']:.2f}]    "
                     f"{s['parse_rate']:.2f}")
    for key in ("sft_vs_random", "grpo_vs_sft"):
        p = report[key]
        lines.append(f"{key}: paired difference {p['diff']:+.2f} [{p['low']:+.2f}, {p['high']:+.2f}] over {p['n']}")
    share = report["grpo_groups_with_variance"]
    targets = [("SFT success >= 40%", report["sft"]["success"] >= 0.4),
               ("SFT interval above random's", report["sft"]["low"] > report["random"]["high"]),
               ("SFT->GRPO >= SFT", report["grpo"]["success"] >= report["sft"]["success"]),
               (">= 50% GRPO groups with reward variance", share is not None and share >= 0.5),
               ("demo <= 6 minutes", report["wall_s"] <= 360)]
    lines.append(f"GRPO groups with non-zero reward variance: {share if share is None else f'{share:.0%}'}; "
                 f"wall time {report['wall_s']:.0f} s")
    if report.get("cpu_s") is not None:  # on a shared machine the wall time is mostly waiting for a core
        lines.append(f"CPU time {report['cpu_s']:.0f} s (this process); load average {report['load_average'][0]} "
                     f"at the start, {report['load_average'][1]} at the end, on {_cores()} cores"
                     + (f", {report['torch_threads']} torch thread(s)" if report.get("torch_threads") else ""))
    if report.get("phases"):
        lines.append("seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in report["phases"].items()))
    lines += [f"target {name}: {'met' if ok else 'NOT met'}" for name, ok in targets]
    return lines


def _cores() -> int:
    import os

    return os.cpu_count() or 1


def save_curves(report: dict, path) -> None:
    """Learning curves beside the table: SFT loss, GRPO mean reward and groups with variance, success."""
    from training.curves import plot_curves

    plot_curves(path, sft_losses=report.get("sft_losses") or [], grpo_reward=report.get("grpo_reward") or [],
                grpo_zero_std=report.get("grpo_frac_zero_std") or [],
                success={n: [(report[n]["success"], report[n]["low"], report[n]["high"])]
                         for n in ("random", "sft", "grpo")})


def write_report(report: dict, folder) -> Path:
    """``report.md`` (the table and the targets), ``report.json`` and ``curves.png`` side by side in ``folder``."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text("```\n" + "\n".join(report_lines(report)) + "\n```\n")
    (folder / "report.json").write_text(json.dumps(report, indent=2, default=str))
    save_curves(report, folder / "curves.png")
    return folder
