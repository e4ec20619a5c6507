"""The recipe experiment (issue 29): one shared SFT, then RL-Real and RL-Real+Mock at the same episode budget.

Top to bottom, in one process on the lake given:

1. Demonstrations: the oracle's episodes of the training templates on the training seeds, on both a
   stock mock phone and a real-like one (``mockphone.reallike``'s skin), curated into one element-list
   dataset; one SFT model (``recipe-sft``) learns from all of them.
2. Arms at the same budget of online episodes (``online_prompts`` rows x ``grpo_steps`` steps):
   **SFT** (no RL), **RL-Real** (``GRPORun(env="real-like")``: episodes on real-like phones, rewarded
   only by the outcome judge, ``phones.judge``) and **RL-Real+Mock** (``env="real-like+mock"``, half the
   online prompts on mock phones rewarded by their verifiers).
3. Evaluation of every arm on four suites of (template, seed) instances: ``id`` (the training templates
   on held-out seeds), ``ood-template`` (other templates of the trained apps), ``ood-app`` (templates of
   apps never trained on), all on real-like phones and judged there, and ``mock-id`` (``id`` on mock
   phones, verified). A suite that shares an instance with the training set, or (out-of-distribution
   suites) a template, is refused before anything runs (``check_suites``).
4. The table (success and Wilson 95% intervals per arm and suite), paired differences against SFT and
   between the RL arms (bootstrap interval and McNemar p, ``training.experiment.paired``), per-arm GRPO
   figures (groups with reward variance, relative L2 weight change, greedy replies that differ from
   SFT's), the learning curves per arm and ``report.md`` in the output folder.

The pieces (demonstrations, curation, evaluation, summaries, paired differences) are
``training.experiment``'s; this module only arranges the arms and the suites.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from training.experiment import (ExperimentConfig, checkpoint_actor, evaluate, groups_with_variance, load_average,
                                 paired, summary)
from training.mock_episodes import EpisodeResult, oracle_demo

ARMS = ("sft", "rl-real", "rl-real+mock")
ARM_ENVS = {"rl-real": "real-like", "rl-real+mock": "real-like+mock"}
SUITES = ("id", "ood-template", "ood-app", "mock-id")


class SuiteOverlapsTraining(ValueError):
    """An evaluation suite holds an instance (or, out of distribution, a template) the SFT model trained on."""


@dataclass(frozen=True)
class RecipeConfig:
    train_tasks: tuple[str, ...] = ("SettingsWifiOn", "MailStar", "ClockCancelTimer")
    ood_template: tuple[str, ...] = ("SettingsBluetoothOn", "SettingsWifiOff")  # other templates, trained apps
    ood_app: tuple[str, ...] = ("NotesCreate",)  # an app no training template is about
    train_seeds: tuple[int, ...] = (0, 1, 2, 3)
    # held out by content: ClockCancelTimer's seeds 102, 103 and 113 and SettingsWifiOn's 104 repeat training
    # instances (check_suites refuses them)
    eval_seeds: tuple[int, ...] = (100, 101, 105, 106)
    sft_steps: int = 300
    grpo_steps: int = 6
    online_prompts: int = 16  # online episode prompts per RL arm (the same budget for both)
    share: float = 0.5  # RL-Real+Mock: share of its online prompts on real-like phones
    learning_rate: float = 3e-3  # SFT's
    grpo_learning_rate: float = 1e-5

    @property
    def experiment(self) -> ExperimentConfig:
        return ExperimentConfig(tasks=self.train_tasks, train_seeds=self.train_seeds, eval_seeds=self.eval_seeds)

    def suites(self) -> dict[str, tuple[tuple[str, ...], str]]:
        """name -> (templates, phone env) of the four suites; every one on the held-out seeds."""
        return {"id": (self.train_tasks, "real-like"), "ood-template": (self.ood_template, "real-like"),
                "ood-app": (self.ood_app, "real-like"), "mock-id": (self.train_tasks, "mock")}


QUICK = RecipeConfig(train_seeds=(0, 1), eval_seeds=(100, 101), sft_steps=150, grpo_steps=3, online_prompts=4)


def check_suites(cfg: RecipeConfig) -> None:
    """Refuse suites that overlap the training set: an instance trained on (by content: its fingerprint or its
    episode, ``mockphone.tasks.instances.describe``, so another seed of a template whose instances repeat
    counts too), or an OOD suite's template or app trained."""
    from functools import cache

    from mockphone.tasks import instances
    from mockphone.tasks.registry import get

    identity = cache(lambda t, s: instances.describe(get(t), s)[:2])  # (fingerprint, episode key)
    trained = {k: (t, s) for t in cfg.train_tasks for s in cfg.train_seeds for k in identity(t, s)}
    trained_apps = {a for t in cfg.train_tasks for a in get(t).app_names}
    for name, (tasks, _) in cfg.suites().items():
        shared = sorted({((t, s), trained[k]) for t in tasks for s in cfg.eval_seeds for k in identity(t, s)
                         if k in trained})
        if shared:
            (t, s), seen = shared[0]
            raise SuiteOverlapsTraining(f"suite {name!r} shares {len(shared)} instance(s) with the training set, "
                                        f"e.g. {t} on seed {s} is the training instance {seen}")
        if name.startswith("ood") and set(tasks) & set(cfg.train_tasks):
            raise SuiteOverlapsTraining(f"suite {name!r} holds trained template(s) "
                                        f"{sorted(set(tasks) & set(cfg.train_tasks))}")
        if name == "ood-app":
            apps = sorted({a for t in tasks for a in get(t).app_names} & trained_apps)
            if apps:
                raise SuiteOverlapsTraining(f"suite 'ood-app' is about trained app(s) {apps}")


def run_recipe(lake, cfg: RecipeConfig, echo: Callable[[str], None] = print) -> dict:
    """Demonstrations -> one SFT -> the RL arms -> every arm on every suite; returns the report."""
    from training.experiment import curate_demos
    from training.grpo import GRPORun, run_grpo
    from training.infer import load_checkpoint
    from training.sft import SFTRun, run_sft

    check_suites(cfg)
    start, phases = time.perf_counter(), {}
    exp = cfg.experiment
    lake.write_episodes([oracle_demo(t, s, env) for env in ("mock", "real-like")
                         for t in cfg.train_tasks for s in cfg.train_seeds])
    ref = curate_demos(lake, exp, "recipe")
    sft = run_sft(lake, SFTRun(dataset=ref, output="recipe-sft", model="tiny", max_steps=cfg.sft_steps,
                               batch_size=4, learning_rate=cfg.learning_rate,
                               warmup_steps=max(1, cfg.sft_steps // 20), lr_scheduler="cosine",
                               save_steps=100_000, balance="task"))
    phases["sft"] = round(time.perf_counter() - start, 1)
    echo(f"SFT on {ref} (mock + real-like demonstrations): loss {sft.metrics.get('first_loss')} -> "
         f"{sft.metrics.get('last_loss')}")
    grpo = {}
    for arm, env in ARM_ENVS.items():
        t0 = time.perf_counter()
        grpo[arm] = run_grpo(lake, GRPORun(
            output=f"recipe-{arm.replace('+', '-')}", model="recipe-sft", env=env, tasks=",".join(cfg.train_tasks),
            share=cfg.share if env == "real-like+mock" else None, online_prompts=cfg.online_prompts,
            max_steps=cfg.grpo_steps, num_generations=8, batch_size=8, temperature=exp.grpo_temperature,
            learning_rate=cfg.grpo_learning_rate, max_completion_tokens=40, seed=0))
        phases[arm] = round(time.perf_counter() - t0, 1)
        echo(f"{arm}: {cfg.grpo_steps} GRPO steps on {env} episodes, reward {grpo[arm].metrics['reward']}")
    results: dict[str, dict[str, list[EpisodeResult]]] = {}
    policies = {"sft": load_checkpoint(lake, "recipe-sft")}
    policies.update({arm: load_checkpoint(lake, grpo[arm].name) for arm in ARM_ENVS})
    for arm in ARMS:
        t0 = time.perf_counter()
        actor = checkpoint_actor(policies[arm])
        results[arm] = {s: evaluate(actor, exp, tasks=tasks, env=env) for s, (tasks, env) in cfg.suites().items()}
        phases[f"eval_{arm}"] = round(time.perf_counter() - t0, 1)
    report = {"config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}, "dataset": ref,
              "table": {arm: {s: summary(r) for s, r in results[arm].items()} for arm in ARMS},
              "paired": {f"{b} - {a}": {s: paired(results[a][s], results[b][s]) for s in SUITES}
                         for a, b in (("sft", "rl-real"), ("sft", "rl-real+mock"), ("rl-real", "rl-real+mock"))},
              "rl": {arm: _rl_figures(grpo[arm], policies["sft"], policies[arm], results["sft"], results[arm])
                     for arm in ARM_ENVS},
              "sft_losses": sft.metrics.get("losses"), "phases": phases,
              "wall_s": round(time.perf_counter() - start, 1), "load_average": load_average()}
    for line in report_lines(report):
        echo(line)
    return report


def _rl_figures(entry, sft_policy, arm_policy, sft_results, arm_results) -> dict:
    logged = sum(1 for v in entry.metrics.get("frac_reward_zero_std", []) if v is not None)
    steps = differ = 0
    for suite, episodes in sft_results.items():
        for a, b in zip(episodes, arm_results[suite]):
            for x, y in zip(a.replies, b.replies):
                steps, differ = steps + 1, differ + (x != y)
    return {"groups": logged, "steps": logged,  # batch 8 = num_generations 8: one group a step
            "groups_with_variance": groups_with_variance(entry.metrics),
            "weight_change": _relative_l2(sft_policy.model, arm_policy.model),
            "replies_differing": differ / steps if steps else None, "reward": entry.metrics.get("reward"),
            "episode_reward": entry.metrics.get("rewards/episode_reward/mean")}


def _relative_l2(a, b) -> float:
    """||b - a|| / ||a|| over all parameters."""
    import torch

    num = den = 0.0
    pb = dict(b.named_parameters())
    for name, p in a.named_parameters():
        num += float(torch.sum((pb[name].detach() - p.detach()) ** 2))
        den += float(torch.sum(p.detach() ** 2))
    return (num / den) ** 0.5 if den else 0.0


def _cell(s: dict) -> str:
    return f"{s['successes']}/{s['episodes']} {s['success']:.0%} [{s['low']:.0%}, {s['high']:.0%}]"


def report_lines(report: dict) -> list[str]:
    lines = ["| arm | " + " | ".join(SUITES) + " |", "|---" * (len(SUITES) + 1) + "|"]
    for arm in ARMS:
        lines.append(f"| {arm} | " + " | ".join(_cell(report["table"][arm][s]) for s in SUITES) + " |")
    lines += ["", "Paired differences (bootstrap 95% interval, McNemar exact p):", ""]
    lines += ["| pair | " + " | ".join(SUITES) + " |", "|---" * (len(SUITES) + 1) + "|"]
    for pair, by_suite in report["paired"].items():
        cells = [f"{d['diff']:+.0%} [{d['low']:+.0%}, {d['high']:+.0%}] p={d.get('p_value', 1.0):.2f}"
                 if d["n"] else "n/a" for d in (by_suite[s] for s in SUITES)]
        lines.append(f"| {pair} | " + " | ".join(cells) + " |")
    lines += ["", "| RL arm | GRPO steps | groups with reward variance | weight change (rel. L2) | "
              "greedy replies differing from SFT |", "|---|---|---|---|---|"]
    for arm, rl in report["rl"].items():
        share = "n/a" if rl["groups_with_variance"] is None else f"{rl['groups_with_variance']:.0%}"
        differ = "n/a" if rl["replies_differing"] is None else f"{rl['replies_differing']:.0%}"
        lines.append(f"| {arm} | {rl['steps']} | {share} | {rl['weight_change']:.2e} | {differ} |")
    lines += ["", f"Wall time {report['wall_s']} s (phases {report['phases']}); 1-min load average at the end "
              f"{report['load_average']}."]
    return lines


def write_report(report: dict, folder) -> Path:
    """``report.md``, ``report.json`` and ``curves.png`` (per arm: GRPO reward by step; SFT loss) in ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text("# Recipe experiment\n\n" + "\n".join(report_lines(report)) + "\n")
    (folder / "report.json").write_text(json.dumps(report, indent=2, default=str))
    fig, axes = plt.subplots(1, 1 + len(report["rl"]), figsize=(5 * (1 + len(report["rl"])), 3.5))
    axes[0].plot(report.get("sft_losses") or [])
    axes[0].set(title="shared SFT loss", xlabel="step")
    for ax, (arm, rl) in zip(axes[1:], report["rl"].items()):
        ax.plot(rl["reward"] or [], marker="o", label="total reward")
        if rl.get("episode_reward"):
            ax.plot(rl["episode_reward"], marker="x", label="episode reward (judge / verifier)")
        ax.set(title=f"{arm}: GRPO reward", xlabel="step", ylim=(0, None))
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(folder / "curves.png", dpi=80)
    plt.close(fig)
    return folder
