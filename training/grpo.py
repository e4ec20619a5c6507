"""GRPO stage: reinforcement learning of a phone-use policy with verifiable rewards (TRL ``GRPOTrainer``).

Algorithm (GRPO, Shao et al. 2024, as TRL implements it): for every prompt, sample
``num_generations`` completions; score each; the advantage of a completion is its
reward minus the group's mean (divided by the group's std); the policy gradient
is the clipped-ratio objective on those advantages. Here ``beta`` defaults to 0 (no
KL penalty, no reference model), as in DAPO and recent recipes: cheaper, and the
step rewards are verifiable so there is nothing for a reference model to guard.

Three sources of prompts, one trainer:

- offline (``--dataset NAME@vN``): one step per prompt from the ``grpo`` export;
  the reward is the weighted sum of the step rewards in ``training/rewards.py``
  (parseable action, action type, tap inside the target box, typed-text similarity);
- online (``--env mock --tasks SELECTOR``): episodes on mock phones, on seeds from 1000 (apart
  from the shipped configs' demonstrations and held-out evaluation seeds); the reward is the
  task's verifier. Two kinds, chosen by the policy's prompt format:
  *played* episodes for single-turn element-list policies (the embedded default's ``json``
  actions, ``training.mock_episodes``): each prompt is an SFT row's prompt of a start state
  (or one some oracle steps in), the completion is the next action, and the reward plays it
  and lets the policy being trained finish the episode greedily before the verifier reads
  the phone; *tool-call* episodes for ``qwen3vl`` policies (``training/env.py``): multi-turn
  ``mobile_use`` calls, each answered with the new screenshot, turns capped at ``max_turns``;
- online on real-like phones (``--env real-like``, :mod:`mockphone.reallike`'s skin, the phone a
  real deployment meets): played episodes as above, but the reward is ONLY the outcome judge's
  verdict (:mod:`phones.judge`: final screen, UI dump, actions; ``unknown`` scores 0), never the
  phone's state or verifier; ``--env real-like+mock --share F``: a share ``F`` of the online
  prompts on real-like phones (judged), the rest on mock phones (verified), in the same batches;
- both (``--mix``, the Real+Mock recipe): offline rows and mock-phone episodes in
  the same batches (``offline_prompts`` samples the offline rows to set the share: TRL draws
  rows uniformly); step rewards score the offline rows and the verifier scores the episodes.

Start from an SFT checkpoint: a random or base model rarely emits a parseable action,
so every completion in a group scores the same and there is no signal. Hand-off:
reads a dataset version and/or a task selector and a model (registered name, path,
Hub id or ``tiny``); writes ``<lake>/models/<output>/final`` and registers it with
its parent, config and reward metrics.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace
from typing import Any

from training import common, rewards
from training.data import cap_images, open_export
from training.errors import BadTrainingConfig
from training.launch import record_rank_data
from training.mock_episodes import ONLINE_SEED
from training.registry import ModelEntry, resolve_model

ENVS = ("none", "mock", "real-like", "real-like+mock")
JUDGED = ("real-like", "real-like+mock")  # online envs whose episodes are scored by the outcome judge
EPISODE_WEIGHT = 2.0  # an online episode's verifier score weighs as much as a perfect step (the step weights' sum)


@dataclass(frozen=True)
class GRPORun:
    output: str  # name of the new model in the lake's registry
    model: str = "tiny"  # usually a registered SFT model
    dataset: str | None = None  # NAME@vN with a grpo export (offline prompts)
    env: str = "none"  # mock | real-like | real-like+mock: online episodes (real-like ones judged, not verified)
    share: float | None = None  # real-like+mock: share of online prompts on real-like phones (default 0.5)
    tasks: str = "all"  # task selector for the mock environment (see mockphone.tasks.registry)
    mix: bool = False  # offline prompts and mock episodes in one run (needs --dataset and --env mock)
    tools: bool = False  # show the mobile_use schema in offline prompts (models SFT'd with --tools; on with --mix)
    online_prompts: int = 64  # mock-episode prompts (with --mix: their share next to the offline rows)
    offline_prompts: int | None = None  # at most this many offline rows: every real-phone row, then a seeded sample
    max_turns: int = 5  # actions per mock episode
    perturb: str = "none"  # mock phones' perturbation profile: none, light, real-like, heavy, or a YAML path
    max_steps: int = 100
    num_generations: int = 4  # completions per prompt (the group)
    batch_size: int = 4  # completions per device per step (a multiple of num_generations)
    grad_accum: int = 1
    learning_rate: float = 1e-6
    beta: float = 0.0  # KL penalty; > 0 loads a reference model
    temperature: float = 1.0
    max_completion_tokens: int = 64
    max_pixels: int | None = None
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    resume: bool = False
    save_steps: int = 500
    seed: int = 0
    split: str = "train"

    def check(self) -> None:
        if self.env not in ENVS:
            raise BadTrainingConfig(f"--env must be one of {', '.join(ENVS)}, got {self.env!r}")
        if self.env == "none" and not self.dataset:
            raise BadTrainingConfig("GRPO needs prompts: pass --dataset NAME@vN (offline), --env mock, or both")
        if self.mix and not (self.dataset and self.env != "none"):
            raise BadTrainingConfig("--mix combines offline and online prompts: pass --dataset NAME@vN and --env mock")
        if self.dataset and self.env != "none" and not self.mix:
            raise BadTrainingConfig(f"--dataset with --env {self.env} needs --mix (the Real+Mock recipe)")
        if self.share is not None and (self.env != "real-like+mock" or not 0.0 < self.share < 1.0):
            raise BadTrainingConfig(f"--share is the real-like share of --env real-like+mock, in (0, 1); "
                                    f"got {self.share} with --env {self.env}")
        if self.perturb != "none":
            from mockphone.errors import BadPerturbationProfile
            from mockphone.perturb import load_profile

            if self.env == "none":
                raise BadTrainingConfig(f"--perturb {self.perturb} applies to online (--env) episodes")
            try:
                load_profile(self.perturb)
            except BadPerturbationProfile as exc:
                raise BadTrainingConfig(str(exc)) from None
        if self.num_generations < 2:
            raise BadTrainingConfig(f"num_generations must be >= 2 (GRPO compares a group), got {self.num_generations}")
        if self.batch_size % self.num_generations:
            raise BadTrainingConfig(f"batch_size ({self.batch_size}) must be a multiple of num_generations "
                                    f"({self.num_generations})")
        for name in ("max_steps", "max_turns", "online_prompts", "max_completion_tokens", "grad_accum",
                     "offline_prompts"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise BadTrainingConfig(f"{name} must be >= 1, got {getattr(self, name)}")


def run_grpo(lake, run: GRPORun, echo: common.Echo | None = None) -> ModelEntry:
    """Train, save and register one GRPO model; every input is checked before any model is loaded."""
    # 1. Check everything before spending compute.
    run.check()
    export = open_export(lake, run.dataset, "grpo", run.split) if run.dataset else None
    tasks = _check_tasks(run.tasks) if run.env != "none" else None
    model_ref = resolve_model(lake, run.model)
    fmt = _policy_format(model_ref.path, export)
    if run.env in JUDGED and not plays_episodes(fmt):
        raise BadTrainingConfig(f"--env {run.env}: judged episodes are played by element-list policies (an export "
                                "with elements: true); tool-call episodes run on mock phones only")
    if run.env == "mock" and not plays_episodes(fmt) and fmt.get("action_format") not in (None, "qwen3vl"):
        raise BadTrainingConfig(f"--env mock: a policy answering {fmt['action_format']!r} actions plays online "
                                "episodes only in the element-list format (an export with elements: true); "
                                "tool-call episodes need qwen3vl")
    folder = common.check_output_name(lake, run.output, run.resume)
    max_pixels = common.image_cap(model_ref, run.max_pixels)
    resume_from = common.last_checkpoint(folder) if run.resume else None
    config = common.log_config("grpo", run, echo, folder)
    config.update(resolved_model=model_ref.path, max_pixels_used=max_pixels, resumed_from=resume_from,
                  online_tasks=tasks)

    # 2. Model and processor (left padding for generation).
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import add_response_schema

    model, processor = common.load_policy(model_ref.path, max_pixels=max_pixels, padding_side="left")
    common.score_only_labelled_positions()

    # 3. Prompts: offline rows, online task rows, or both, and what scores them.
    train, env_factory, episode_reward = _prompts(run, export, max_pixels, processor, fmt)
    config.update(online_episodes=None if run.env == "none" else "played" if episode_reward else "tool calls")
    if env_factory is not None:
        add_response_schema(processor)  # lets TRL parse <tool_call> blocks into tool calls
    reward_funcs = (list(rewards.STEP_REWARDS) if export else []) + ([episode_reward] if episode_reward else [])
    weights = (list(rewards.STEP_WEIGHTS) if export else []) + ([EPISODE_WEIGHT] if episode_reward else [])
    args = GRPOConfig(
        output_dir=str(folder / "checkpoints"), max_steps=run.max_steps, per_device_train_batch_size=run.batch_size,
        gradient_accumulation_steps=run.grad_accum, num_generations=run.num_generations,
        learning_rate=run.learning_rate, beta=run.beta, temperature=run.temperature,
        max_completion_length=run.max_completion_tokens, max_tool_calling_iterations=run.max_turns,
        reward_weights=weights or None, logging_steps=1, save_steps=run.save_steps,
        save_total_limit=2, seed=run.seed, use_cpu=common.use_cpu(), bf16=not common.use_cpu(), report_to="none",
        gradient_checkpointing=common.gradient_checkpointing(),
        dataloader_num_workers=0, disable_tqdm=echo is None, log_completions=False,
    )
    trainer = GRPOTrainer(model=model, args=args, train_dataset=train, processing_class=processor,
                          reward_funcs=reward_funcs or None, environment_factory=env_factory,
                          peft_config=common.lora_config(run.lora_r, run.lora_alpha) if run.lora else None)
    if episode_reward is not None:  # the policy being trained finishes each online episode
        from training.infer import CheckpointPolicy

        episode_reward.policy = CheckpointPolicy(trainer.model, processor, model_ref.path)

    # 4. Train, save a plain model, register it with the reward history.
    threads = common.choose_threads(echo)
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume_from)
    seconds = time.perf_counter() - start
    processor.tokenizer.padding_side = processor.padding_side = "right"  # the saved model's default, as SFT's
    final = common.save_final(trainer, processor, folder, run.lora)
    record_rank_data(trainer, folder)
    metrics = _reward_metrics(trainer)
    metrics.update(train_seconds=round(seconds, 3), steps=trainer.state.global_step, torch_threads=threads)
    entry = common.register(lake, run.output, final, model_ref, export, config, metrics)
    if echo is not None:
        echo(f"registered {entry.name} at {entry.path} (mean reward by step: {metrics['reward']})")
    return entry


def _check_tasks(selector: str) -> list[str]:
    from mockphone.errors import UnknownTask
    from mockphone.tasks.registry import select

    try:
        return [cls.name() for cls in select(selector)]
    except UnknownTask as exc:
        raise BadTrainingConfig(f"--tasks {selector!r}: {exc}") from None


def _policy_format(model_path: str, export) -> dict[str, Any]:
    """The prompt format the policy speaks: the export's, else the checkpoint's record, else {}."""
    from training.prompt_format import export_format, read_format

    return export_format(export) or read_format(model_path) or {}


def plays_episodes(fmt: dict[str, Any]) -> bool:
    """Element-list policies answering one action per prompt (``json``, the embedded default) meet online
    episodes through ``EpisodeReward``; TRL's tool-calling environments drive only ``qwen3vl`` calls."""
    return bool(fmt.get("elements")) and fmt.get("action_format") not in (None, "qwen3vl")


def _prompts(run: GRPORun, export, max_pixels: int, processor, fmt: dict[str, Any]):
    """(dataset, environment_factory, episode_reward) for the run's sources of prompts.

    Online rows are either played episodes (``plays_episodes``: prompts exactly like SFT's, the
    reward plays the completion and the policy's continuation, ``training.mock_episodes``) or
    multi-turn tool-call episodes (``training.env``); element-format tool-call policies meet mock
    phones of the default size (the one their demonstrations were recorded on) with element lists."""
    from datasets import Dataset

    from training.data import with_tool_schema
    from training.env import EnvSettings, MockPhoneEnv, OfflineStep, env_factory, task_rows

    played = run.env != "none" and plays_episodes(fmt)
    offline = None
    if export is not None:
        columns = ["prompt", "images", "target_action", "target_box", "width", "height", "coords", "action_format"]
        offline = _sample_offline(export.load(), run.offline_prompts, run.seed).select_columns(columns)
        offline = cap_images(offline, max_pixels)
        if run.tools or (run.mix and not played):  # the same system prompt the online tool-call episodes show
            offline = with_tool_schema(offline, processor, [MockPhoneEnv.__new__(MockPhoneEnv).mobile_use], "prompt")
    if run.env == "none":
        return offline, None, None
    if played:
        from training.mock_episodes import EpisodeFormat, EpisodeReward, online_rows

        episode_format = EpisodeFormat(fmt["action_format"], fmt.get("coords") or "rel1000", int(fmt.get("history") or 0))
        rows = []
        for env, n in env_counts(run.env, run.online_prompts, run.share).items():
            rows += online_rows(_check_tasks(run.tasks), n, episode_format, max_pixels, seed=ONLINE_SEED + run.seed,
                                perturb=run.perturb, env=env)
        online = Dataset.from_list(rows).shuffle(seed=run.seed)
        reward = EpisodeReward(episode_format, max_new_tokens=run.max_completion_tokens, perturb=run.perturb)
        if not run.mix:
            return online, None, reward
        offline_extra = {"task": "", "seed": 0, "prefix": "[]", "budget": 0, "env": "offline"}
        return _mixed(offline, online, offline_extra, run.seed), None, reward
    settings = EnvSettings(max_turns=run.max_turns, max_pixels=max_pixels, perturb=run.perturb)
    if fmt.get("elements"):
        from mockphone.layout import Display

        settings = replace(settings, elements=True, width=Display().width, height=Display().height)
    factory = env_factory(settings)
    online = Dataset.from_list(task_rows(run.tasks, run.online_prompts, settings, ONLINE_SEED + run.seed))
    if not run.mix:
        return online, factory, None
    # Mixed: one schema for both kinds of row; the `environment` column routes each row.
    offline = offline.add_column("environment", ["offline"] * len(offline))
    online = online.add_column("environment", ["mock"] * len(online))
    return _mixed(offline, online, {"task": "", "seed": 0}, run.seed), {"mock": factory, "offline": OfflineStep}, None


def env_counts(env: str, n: int, share: float | None = None) -> dict[str, int]:
    """Online prompts per phone kind: all on one kind, or ``real-like+mock`` split by ``share`` (default 0.5)."""
    if env != "real-like+mock":
        return {env: n}
    real = round(n * (0.5 if share is None else share))
    return {k: v for k, v in (("real-like", real), ("mock", n - real)) if v}


def _sample_offline(rows, n: int | None, seed: int):
    """At most ``n`` offline rows (TRL samples rows uniformly, so this sets a mix's share): every real-phone row
    first (scarce, and no verifier can score them online), then a seeded sample of the others."""
    if n is None or len(rows) <= n:
        return rows
    phones = rows["phone"] if "phone" in rows.column_names else [None] * len(rows)
    real = [i for i, p in enumerate(phones) if p == "real"][:n]
    rest = [i for i, p in enumerate(phones) if p != "real"]
    chosen = real + random.Random(seed).sample(rest, n - len(real))
    return rows.select(sorted(chosen))


def _mixed(offline, online, offline_extra: dict[str, Any], seed: int):
    """Offline and online rows in one shuffled dataset with one schema (each side's missing columns filled)."""
    from datasets import concatenate_datasets

    for name, value in offline_extra.items():
        offline = offline.add_column(name, [value] * len(offline))
    for name, value in (("target_action", None), ("target_box", None), ("width", 0), ("height", 0),
                        ("coords", "rel1000"), ("action_format", "qwen3vl")):
        online = online.add_column(name, [value] * len(online))
    online = online.cast(offline.features)
    return concatenate_datasets([offline, online]).shuffle(seed=seed)


def _reward_metrics(trainer) -> dict[str, Any]:
    history = [h for h in trainer.state.log_history if "reward" in h]
    out: dict[str, Any] = {"reward": [round(h["reward"], 4) for h in history],
                           "reward_std": [round(h.get("reward_std", 0.0), 4) for h in history],
                           # share of prompt groups whose completions all scored the same (no GRPO signal)
                           "frac_reward_zero_std": [h.get("frac_reward_zero_std") for h in history]}
    for key in sorted({k for h in history for k in h if k.startswith("rewards/") and k.endswith("/mean")
                       or k.startswith("tools/")}):
        out[key] = [h.get(key) for h in history]
    return out
