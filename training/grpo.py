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
- online (``--env mock --tasks SELECTOR``): multi-turn episodes on mock phones
  (``training/env.py``); the actions are ``mobile_use`` tool calls, each answered
  with the new screenshot, turns capped at ``max_turns``; the reward is the task's
  verifier;
- both (``--mix``, the Real+Mock recipe): offline rows and mock-phone episodes in
  the same batches, each routed to its environment; step rewards score the offline
  rows and the verifier scores the episodes.

Start from an SFT checkpoint: a random or base model rarely emits a parseable action,
so every completion in a group scores the same and there is no signal. Hand-off:
reads a dataset version and/or a task selector and a model (registered name, path,
Hub id or ``tiny``); writes ``<lake>/models/<output>/final`` and registers it with
its parent, config and reward metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from training import common, rewards
from training.data import cap_images, open_export
from training.errors import BadTrainingConfig
from training.launch import record_rank_data
from training.registry import ModelEntry, resolve_model

ENVS = ("none", "mock")


@dataclass(frozen=True)
class GRPORun:
    output: str  # name of the new model in the lake's registry
    model: str = "tiny"  # usually a registered SFT model
    dataset: str | None = None  # NAME@vN with a grpo export (offline prompts)
    env: str = "none"  # "mock": online episodes on mock phones
    tasks: str = "all"  # task selector for the mock environment (see mockphone.tasks.registry)
    mix: bool = False  # offline prompts and mock episodes in one run (needs --dataset and --env mock)
    tools: bool = False  # show the mobile_use schema in offline prompts (models SFT'd with --tools; on with --mix)
    online_prompts: int = 64  # mock-episode prompts (with --mix: their share next to the offline rows)
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
        if self.mix and not (self.dataset and self.env == "mock"):
            raise BadTrainingConfig("--mix combines offline and online prompts: pass --dataset NAME@vN and --env mock")
        if self.dataset and self.env == "mock" and not self.mix:
            raise BadTrainingConfig("--dataset with --env mock needs --mix (the Real+Mock recipe)")
        if self.perturb != "none":
            from mockphone.errors import BadPerturbationProfile
            from mockphone.perturb import load_profile

            if self.env != "mock":
                raise BadTrainingConfig(f"--perturb {self.perturb} applies to --env mock episodes")
            try:
                load_profile(self.perturb)
            except BadPerturbationProfile as exc:
                raise BadTrainingConfig(str(exc)) from None
        if self.num_generations < 2:
            raise BadTrainingConfig(f"num_generations must be >= 2 (GRPO compares a group), got {self.num_generations}")
        if self.batch_size % self.num_generations:
            raise BadTrainingConfig(f"batch_size ({self.batch_size}) must be a multiple of num_generations "
                                    f"({self.num_generations})")
        for name in ("max_steps", "max_turns", "online_prompts", "max_completion_tokens", "grad_accum"):
            if getattr(self, name) < 1:
                raise BadTrainingConfig(f"{name} must be >= 1, got {getattr(self, name)}")


def run_grpo(lake, run: GRPORun, echo: common.Echo | None = None) -> ModelEntry:
    """Train, save and register one GRPO model; every input is checked before any model is loaded."""
    # 1. Check everything before spending compute.
    run.check()
    export = open_export(lake, run.dataset, "grpo", run.split) if run.dataset else None
    tasks = _check_tasks(run.tasks) if run.env == "mock" else None
    model_ref = resolve_model(lake, run.model)
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

    # 3. Prompts: offline rows, online task rows, or both, and the environments that serve them.
    train, env_factory = _prompts(run, export, max_pixels, processor, _element_format(model_ref.path, export))
    if run.env == "mock":
        add_response_schema(processor)  # lets TRL parse <tool_call> blocks into tool calls
    args = GRPOConfig(
        output_dir=str(folder / "checkpoints"), max_steps=run.max_steps, per_device_train_batch_size=run.batch_size,
        gradient_accumulation_steps=run.grad_accum, num_generations=run.num_generations,
        learning_rate=run.learning_rate, beta=run.beta, temperature=run.temperature,
        max_completion_length=run.max_completion_tokens, max_tool_calling_iterations=run.max_turns,
        reward_weights=list(rewards.STEP_WEIGHTS) if export else None, logging_steps=1, save_steps=run.save_steps,
        save_total_limit=2, seed=run.seed, use_cpu=common.use_cpu(), bf16=not common.use_cpu(), report_to="none",
        gradient_checkpointing=common.gradient_checkpointing(),
        dataloader_num_workers=0, disable_tqdm=echo is None, log_completions=False,
    )
    trainer = GRPOTrainer(model=model, args=args, train_dataset=train, processing_class=processor,
                          reward_funcs=list(rewards.STEP_REWARDS) if export else None,
                          environment_factory=env_factory,
                          peft_config=common.lora_config(run.lora_r, run.lora_alpha) if run.lora else None)

    # 4. Train, save a plain model, register it with the reward history.
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=resume_from)
    seconds = time.perf_counter() - start
    processor.tokenizer.padding_side = processor.padding_side = "right"  # the saved model's default, as SFT's
    final = common.save_final(trainer, processor, folder, run.lora)
    record_rank_data(trainer, folder)
    metrics = _reward_metrics(trainer)
    metrics.update(train_seconds=round(seconds, 3), steps=trainer.state.global_step)
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


def _element_format(model_path: str, export) -> bool:
    """Whether the policy speaks the element-list format (the export's, else the checkpoint's record)."""
    from training.prompt_format import export_format, read_format

    fmt = export_format(export) or read_format(model_path) or {}
    return bool(fmt.get("elements"))


def _prompts(run: GRPORun, export, max_pixels: int, processor, elements: bool = False):
    """(dataset, environment_factory) for the run's sources of prompts. Element-format policies meet
    mock phones of the default size (the one their demonstrations were recorded on) with element lists."""
    from datasets import Dataset, concatenate_datasets

    from training.data import with_tool_schema
    from training.env import EnvSettings, MockPhoneEnv, OfflineStep, env_factory, task_rows

    offline = None
    if export is not None:
        columns = ["prompt", "images", "target_action", "target_box", "width", "height", "coords", "action_format"]
        offline = cap_images(export.load().select_columns(columns), max_pixels)
        if run.tools or run.mix:  # the same system prompt the online episodes show
            offline = with_tool_schema(offline, processor, [MockPhoneEnv.__new__(MockPhoneEnv).mobile_use], "prompt")
    if run.env != "mock":
        return offline, None
    settings = EnvSettings(max_turns=run.max_turns, max_pixels=max_pixels, perturb=run.perturb)
    if elements:
        from mockphone.layout import Display

        settings = replace(settings, elements=True, width=Display().width, height=Display().height)
    factory = env_factory(settings)
    online = Dataset.from_list(task_rows(run.tasks, run.online_prompts, settings, run.seed))
    if not run.mix:
        return online, factory
    # Mixed: one schema for both kinds of row; the `environment` column routes each row.
    n = len(offline)
    offline = offline.add_column("environment", ["offline"] * n).add_column("task", [""] * n)
    offline = offline.add_column("seed", [0] * n)
    online = online.add_column("environment", ["mock"] * len(online))
    for name, value in (("target_action", None), ("target_box", None), ("width", 0), ("height", 0),
                        ("coords", "rel1000"), ("action_format", "qwen3vl")):
        online = online.add_column(name, [value] * len(online))
    online = online.cast(offline.features)
    mixed = concatenate_datasets([offline, online]).shuffle(seed=run.seed)
    return mixed, {"mock": factory, "offline": OfflineStep}


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
