"""SFT stage: supervised fine-tuning of a vision-language policy on a dataset version's ``sft`` export.

Algorithm: next-token cross-entropy on the assistant turn only (TRL ``SFTTrainer``
with ``assistant_only_loss``): each row is the system prompt, the user turn (the
screenshot, capped at ``max_pixels``, the task and the recent actions) and the
assistant turn (one action in the export's text format). Only the action's tokens
and its end-of-turn token carry loss, so the model learns to act, not to echo
prompts. Optional LoRA adapters (peft, all linear layers) are merged into the saved
model, so every registered checkpoint loads as a plain model.

Hand-off: reads ``--dataset NAME@vN``, writes ``<lake>/models/<output>/final`` and
registers it in the lake's ``models`` table (base model, parent, dataset version and
fingerprint, this config, metrics). ``grpo.py`` and rollouts take it by name.
Checkpoints go to ``<lake>/models/<output>/checkpoints``; ``resume`` continues the
latest one. Multi-GPU runs: ``accelerate launch --config_file training/accelerate/...``
(see training/README.md); the same code runs on CPU for tests.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from training import common
from training.data import BALANCE, balance_rows, cap_images, open_export, with_tool_schema
from training.errors import BadTrainingConfig
from training.launch import record_rank_data
from training.registry import ModelEntry, resolve_model


@dataclass(frozen=True)
class SFTRun:
    dataset: str  # NAME@vN with an sft export
    output: str  # name of the new model in the lake's registry
    model: str = "tiny"  # Hub id, local folder, registered model name, or "tiny"
    max_steps: int = -1  # stop after this many optimizer steps (-1: run `epochs`)
    epochs: float = 1.0
    batch_size: int = 4
    grad_accum: int = 1
    learning_rate: float = 2e-5
    warmup_steps: int = 0
    lr_scheduler: str = "constant_with_warmup"  # any transformers scheduler name (cosine, linear, ...)
    max_pixels: int | None = None  # image-size cap per screenshot (default: tiny 8192, others 401408)
    tools: bool = False  # show the mobile_use tool's schema in the system prompt, as online GRPO does
    lora: bool = False  # train LoRA adapters instead of all weights (merged at the end)
    lora_r: int = 16
    lora_alpha: int = 32
    resume: bool = False  # continue from the latest checkpoint of this output
    save_steps: int = 500
    logging_steps: int = 1
    seed: int = 0
    split: str = "train"
    balance: str | None = None  # "task" or "app": every group weighs as many episodes as the largest

    def check(self) -> None:
        for name in ("batch_size", "grad_accum", "save_steps", "logging_steps"):
            if getattr(self, name) < 1:
                raise BadTrainingConfig(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_steps == 0 or self.max_steps < -1:
            raise BadTrainingConfig(f"max_steps must be positive (or -1 for whole epochs), got {self.max_steps}")
        if self.max_steps == -1 and self.epochs <= 0:
            raise BadTrainingConfig(f"epochs must be positive, got {self.epochs}")
        if self.learning_rate <= 0:
            raise BadTrainingConfig(f"learning_rate must be positive, got {self.learning_rate}")
        if self.balance is not None and self.balance not in BALANCE:
            raise BadTrainingConfig(f"balance must be one of {', '.join(BALANCE)} (got {self.balance!r})")


@dataclass
class SFTJob:
    """A checked, ready-to-train SFT run (``prepare_sft``); ``run_sft`` trains and registers it."""

    run: SFTRun
    trainer: Any
    processor: Any
    export: Any
    model_ref: Any
    folder: Any
    config: dict[str, Any]
    resume_from: str | None


def prepare_sft(lake, run: SFTRun, echo: common.Echo | None = None) -> SFTJob:
    """Check every input (before any model is loaded), then build the data pipeline and the trainer."""
    # 1. Check everything that can be wrong before spending compute.
    run.check()
    export = open_export(lake, run.dataset, "sft", run.split)
    model_ref = resolve_model(lake, run.model)
    folder = common.check_output_name(lake, run.output, run.resume)
    max_pixels = common.image_cap(model_ref, run.max_pixels)
    resume_from = common.last_checkpoint(folder) if run.resume else None
    config = common.log_config("sft", run, echo, folder)
    config.update(resolved_model=model_ref.path, max_pixels_used=max_pixels, resumed_from=resume_from)

    # 2. Data: the export's messages and screenshots, images capped once and cached.
    train = export.load()
    if run.balance:
        before = len(train)
        train = balance_rows(lake, train, run.balance, run.seed)
        config.update(balanced_by=run.balance, rows_before_balance=before, rows=len(train))
    train = cap_images(train.select_columns(["messages", "images"]), max_pixels)

    # 3. Model and processor (image cap applied in the processor too).
    from trl import SFTConfig, SFTTrainer

    model, processor = common.load_policy(model_ref.path, max_pixels=max_pixels)
    common.score_only_labelled_positions()
    if run.tools:
        from training.env import MockPhoneEnv

        train = with_tool_schema(train, processor, [MockPhoneEnv.__new__(MockPhoneEnv).mobile_use])
    args = SFTConfig(
        output_dir=str(folder / "checkpoints"), max_steps=run.max_steps, num_train_epochs=run.epochs,
        per_device_train_batch_size=run.batch_size, gradient_accumulation_steps=run.grad_accum,
        learning_rate=run.learning_rate, warmup_steps=run.warmup_steps, lr_scheduler_type=run.lr_scheduler,
        logging_steps=run.logging_steps, save_steps=run.save_steps, save_total_limit=2, seed=run.seed,
        assistant_only_loss=True, max_length=None, use_cpu=common.use_cpu(), bf16=not common.use_cpu(),
        gradient_checkpointing=common.gradient_checkpointing(),
        report_to="none", dataloader_num_workers=0, disable_tqdm=echo is None,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=processor,
                         peft_config=common.lora_config(run.lora_r, run.lora_alpha) if run.lora else None)
    return SFTJob(run, trainer, processor, export, model_ref, folder, config, resume_from)


def run_sft(lake, run: SFTRun, echo: common.Echo | None = None) -> ModelEntry:
    """Train, save and register one SFT model; every input is checked before any model is loaded."""
    job = prepare_sft(lake, run, echo)

    # 4. Train, save a plain model, register it.
    threads = common.choose_threads(echo)
    start = time.perf_counter()
    result = job.trainer.train(resume_from_checkpoint=job.resume_from)
    seconds = time.perf_counter() - start
    final = common.save_final(job.trainer, job.processor, job.folder, run.lora)
    ranks = record_rank_data(job.trainer, job.folder)
    metrics: dict[str, Any] = {**common.loss_metrics(job.trainer), "train_seconds": round(seconds, 3),
                               "train_loss": result.training_loss, "rows": job.export.rows,
                               "samples_per_second": result.metrics.get("train_samples_per_second"),
                               "world_size": ranks["world_size"], "torch_threads": threads}
    entry = common.register(lake, run.output, final, job.model_ref, job.export, job.config, metrics)
    if echo is not None:
        echo(f"registered {entry.name} at {entry.path} (loss {metrics['first_loss']} -> {metrics['last_loss']})")
    return entry
