"""`train sft --launcher accelerate --num-processes 2`: two gloo ranks on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from training.launch import accelerate_command, strip_launcher_args
from training.registry import list_models


def test_launcher_arguments_are_not_passed_to_the_ranks():
    argv = ["train", "sft", "--launcher", "accelerate", "--num-processes=2", "--output", "x",
            "--accelerate-config", "c.yaml", "--max-steps", "3"]
    assert strip_launcher_args(argv) == ["train", "sft", "--output", "x", "--max-steps", "3"]
    cmd = accelerate_command(["train", "sft"], 2)
    assert cmd[-4:] == ["-m", "phoneloop.cli", "train", "sft"] and "--multi_gpu" in cmd


def test_two_processes_train_on_different_rows_and_register_one_model(train_lake, tiny_path):
    env = {**os.environ, "PHONELOOP_LAKE": train_lake.uri}
    result = subprocess.run(
        [sys.executable, "-m", "phoneloop.cli", "train", "sft", "--dataset", "clock@v1", "--model", "tiny",
         "--output", "clock-ddp", "--max-steps", "2", "--batch-size", "1",
         "--launcher", "accelerate", "--num-processes", "2"],
        env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    train_lake.invalidate()
    entries = list_models(train_lake, "clock-ddp")
    assert len(entries) == 1 and entries[0].metrics["world_size"] == 2
    assert result.stdout.count('"name": "clock-ddp"') == 1  # one rank prints the registered model
    start = result.stdout.index('{\n  "name"')
    assert json.JSONDecoder().raw_decode(result.stdout[start:])[0]["path"] == entries[0].path
    ranks = {}
    folder = os.path.dirname(entries[0].path)
    for rank in (0, 1):
        with open(os.path.join(folder, "ranks", f"rank{rank}.json")) as fh:
            ranks[rank] = json.load(fh)
    assert all(r["world_size"] == 2 for r in ranks.values())
    assert ranks[0]["rows"] and ranks[1]["rows"]
    assert set(ranks[0]["rows"]) != set(ranks[1]["rows"])  # each rank got its own shard
