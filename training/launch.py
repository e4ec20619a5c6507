"""Running a training stage in several processes through ``accelerate launch``.

``phoneloop train sft|grpo ... --launcher accelerate --num-processes N`` re-runs the same
command under ``accelerate launch`` (data parallel: each rank trains on its own shard of
every batch, gradients are averaged; only rank 0 writes the config, the processor and the
registry row). Without a GPU the ranks run on the CPU with the gloo backend
(``ACCELERATE_USE_CPU=true``), which is how the tests check it; with GPUs, pass one of the
configs in ``training/accelerate/`` (``--accelerate-config``) or accelerate's defaults.

After training each rank writes ``<model folder>/ranks/rank<R>.json`` with the dataset rows
its sampler gave it, so a run can show that the ranks saw different data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from training.errors import BadTrainingConfig

LAUNCHERS = ("none", "accelerate")


def strip_launcher_args(argv: list[str]) -> list[str]:
    """``argv`` without --launcher/--num-processes/--accelerate-config (and their values)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--launcher", "--num-processes", "--accelerate-config"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def accelerate_command(stage_argv: list[str], num_processes: int, config: str | None = None) -> list[str]:
    """The ``accelerate launch`` command that runs ``phoneloop <stage_argv>`` in N processes."""
    if num_processes < 1:
        raise BadTrainingConfig(f"--num-processes must be >= 1, got {num_processes}")
    if config is not None and not Path(config).is_file():
        raise BadTrainingConfig(f"--accelerate-config {config} does not exist")
    cmd = [sys.executable, "-m", "accelerate.commands.launch"]
    if config:
        cmd += ["--config_file", config]
    cmd += ["--num_processes", str(num_processes), "--num_machines", "1", "--dynamo_backend", "no"]
    if num_processes > 1:
        cmd += ["--multi_gpu"]  # accelerate's torchrun path; on CPU-only machines it runs gloo ranks
    if not config:
        cmd += ["--mixed_precision", "no" if cpu_only() else "bf16"]
    return cmd + ["-m", "phoneloop.cli", *stage_argv]


def cpu_only() -> bool:
    import torch

    return not torch.cuda.is_available()


def launch(stage_argv: list[str], num_processes: int, config: str | None = None) -> int:
    """Run the stage under accelerate; returns its exit code (rank failures make it non-zero)."""
    env = dict(os.environ)
    if cpu_only():
        env["ACCELERATE_USE_CPU"] = "true"
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run(accelerate_command(stage_argv, num_processes, config), env=env).returncode


def record_rank_data(trainer, folder: Path) -> dict:
    """Write which dataset rows this rank's sampler gave it (one epoch), for audits and tests."""
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    loader = trainer.get_train_dataloader()
    rows = [int(i) for batch in loader.batch_sampler for i in batch] if loader.batch_sampler is not None else []
    body = {"rank": rank, "world_size": world, "rows": rows}
    target = folder / "ranks"
    target.mkdir(parents=True, exist_ok=True)
    (target / f"rank{rank}.json").write_text(json.dumps(body))
    return body
