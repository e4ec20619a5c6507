"""What the SFT and GRPO stages share: names, device choice, loading a policy, logging, registration."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from training.errors import BadTrainingConfig
from training.registry import ModelEntry, ResolvedModel, checkpoint_dir, list_models, register_model
from training.tiny import TINY, TINY_MAX_PIXELS, is_tiny

log = logging.getLogger("phoneloop.training")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
DEFAULT_MAX_PIXELS = 401_408  # 392 Qwen3-VL image tokens (32 px each side per token)
Echo = Callable[[str], None]


def check_output_name(lake, name: str, resume: bool) -> Path:
    """The checkpoint folder for ``name``; registered names are immutable (pick a new one)."""
    if not _NAME.match(name or ""):
        raise BadTrainingConfig(f"--output {name!r} is not a valid model name (lowercase letters, digits, _ . -)")
    if list_models(lake, name):
        raise BadTrainingConfig(f"model {name!r} is already registered in the lake; choose a new --output name")
    folder = checkpoint_dir(lake, name)
    ran = (folder / "checkpoints").is_dir() and any((folder / "checkpoints").iterdir()) or (folder / "final").exists()
    if ran and not resume:
        raise BadTrainingConfig(f"{folder} already holds a run; pass --resume to continue it or choose a new --output")
    return folder


def image_cap(model: ResolvedModel, max_pixels: int | None) -> int:
    if max_pixels is not None:
        if max_pixels < 32 * 32:
            raise BadTrainingConfig(f"--max-pixels {max_pixels} is below one 32x32 image token")
        return max_pixels
    return TINY_MAX_PIXELS if model.base_model == TINY or is_tiny(model.path) else DEFAULT_MAX_PIXELS


def use_cpu() -> bool:
    import torch

    return not torch.cuda.is_available()


def choose_threads(echo: Echo | None = None) -> int:
    """Set torch's CPU threads for the stage about to run, from what is free *now* (0 on a GPU):
    ``PHONELOOP_TORCH_THREADS`` if set, else the largest of 4, 2, 1 that the idle cores can hold
    (idle share of every core over half a second, with half a core of slack; the 1-minute load
    average would still count work that just ended). Called at the start of every training run and
    model server, so a loop that began on an idle machine does not keep 2 threads once it is busy.

    Measured here on 2 idle cores: 0.35 s per SFT step with one thread, 0.235 s with two. On a loaded
    machine extra threads wait on each other (OpenMP's threads synchronise at every operation and a
    thread without a core stalls the rest): ~30 s per step with 2 threads under load 10-15 on 2 cores,
    ~5 s with one; hence the check."""
    import os

    if not use_cpu():
        return 0
    import torch

    if os.environ.get("PHONELOOP_TORCH_THREADS"):
        threads = int(os.environ["PHONELOOP_TORCH_THREADS"])
    else:
        import psutil

        idle = (os.cpu_count() or 1) * (1 - psutil.cpu_percent(interval=0.5) / 100)
        threads = next(t for t in (4, 2, 1) if t == 1 or idle >= t - 0.5)
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)
        if echo is not None:
            echo(f"torch threads: {threads} (from the cores idle now)")
    return threads


def gradient_checkpointing() -> bool:
    """On GPUs (TRL's default, memory for compute); off on CPU, where memory is not what runs out and
    recomputing every layer's activations cost the tiny model's SFT ~15% of its step time (profiled)."""
    return not use_cpu()


def score_only_labelled_positions() -> None:
    """On CPU, let TRL's fused LM head score only the positions that carry a label (the answer
    tokens), as it already does on Triton devices.

    TRL (``trl.trainer.utils.add_fused_lm_head``) projects hidden states through the LM head
    position by position; it keeps only the labelled positions when ``_use_triton(device)`` is
    true and scores *every* position elsewhere, so that compilers such as Neuron's see fixed tile
    shapes. Eager CPU compiles nothing, and an element-list prompt has ~650 positions of which
    ~13 are labelled: scoring all of them was half of the tiny model's SFT step (measured 0.61 ->
    0.31 s per step of 4 rows, the same losses to 6 digits). Only the name TRL's fused head reads
    is rebound (the kernels keep their own choice); with a TRL that no longer has it, nothing
    changes. Tested in ``tests/training/test_fused_head.py``."""
    if not use_cpu():
        return
    import trl.trainer.utils as trl_utils

    current = getattr(trl_utils, "_use_triton", None)
    if current is None or getattr(current, "phoneloop_cpu_compact", False):
        return

    def compact_on_cpu(device) -> bool:
        return device.type == "cpu" or current(device)

    compact_on_cpu.phoneloop_cpu_compact = True  # type: ignore[attr-defined]
    trl_utils._use_triton = compact_on_cpu


def load_policy(path: str, *, max_pixels: int, padding_side: str | None = None):
    """(model, processor) for training: float32 on CPU, bfloat16 on GPUs."""
    import torch
    from transformers import AutoModelForImageTextToText

    from training.processor import load_processor

    processor = load_processor(path, max_pixels=max_pixels, padding_side=padding_side)
    dtype = torch.float32 if use_cpu() else torch.bfloat16
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=dtype)
    return model, processor


def lora_config(r: int, alpha: int, dropout: float = 0.05):
    from peft import LoraConfig

    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules="all-linear",
                      task_type="CAUSAL_LM")


def is_main_process() -> bool:
    """Rank 0 of an ``accelerate launch`` (or the only process): the one that writes files and registers."""
    return os.environ.get("RANK", "0") == "0"


def log_config(stage: str, config: Any, echo: Echo | None, folder: Path) -> dict[str, Any]:
    """Write the full config next to the checkpoints and print it: a run can always be reproduced."""
    data = {"stage": stage, **asdict(config)}
    if not is_main_process():
        return data
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "phoneloop_config.json").write_text(json.dumps(data, indent=2, sort_keys=True, default=str))
    text = f"{stage} config:\n" + json.dumps(data, indent=2, sort_keys=True, default=str)
    log.info(text)
    if echo is not None:
        echo(text)
    return data


def last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    ckpts = folder / "checkpoints"
    return get_last_checkpoint(str(ckpts)) if ckpts.is_dir() else None


def save_final(trainer, processor, folder: Path, lora: bool) -> Path:
    """Save a plain (LoRA-merged) model and its processor at ``folder/final``: loadable for inference."""
    final = folder / "final"
    if lora:
        if is_main_process():
            trainer.model.merge_and_unload().save_pretrained(final)
    else:
        trainer.save_model(str(final))  # every rank calls it: FSDP / ZeRO-3 gather the weights
    if is_main_process():
        processor.save_pretrained(final)
    return final


def register(lake, name: str, final: Path, model: ResolvedModel, export, config: dict, metrics: dict) -> ModelEntry:
    """Register ``final``, recording its prompt format (the export's, else its parent's) with it."""
    from training.prompt_format import export_format, read_format, write_format

    fmt = export_format(export) or read_format(model.path)
    config = {**config, "prompt_format": fmt}
    if is_main_process():
        write_format(final, fmt)
    entry = ModelEntry(name=name, path=str(final), base_model=model.base_model,
                       dataset=export.ref if export else None,
                       dataset_fingerprint=export.fingerprint if export else None,
                       parent=model.parent, config=config, metrics=metrics)
    return register_model(lake, entry) if is_main_process() else entry


def loss_metrics(trainer) -> dict[str, Any]:
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    return {"steps": trainer.state.global_step, "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None, "losses": losses}
