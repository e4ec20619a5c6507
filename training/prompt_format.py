"""The prompt format a checkpoint was trained on, recorded with the model so policies build the same prompt.

SFT and GRPO read it from the dataset version's recipe (the export's ``action_format``,
``coords``, ``history`` and ``elements``); a GRPO run without an export (online only)
inherits its parent's. It is written twice: into the checkpoint folder as
``phoneloop_format.json`` (so a bare folder carries it) and into the registry row's
config as ``prompt_format``. ``read_format(path)`` returns it, or None for a checkpoint
trained before formats were recorded (or not by phoneloop).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FORMAT_FILE = "phoneloop_format.json"
KEYS = ("action_format", "coords", "history", "elements")


def export_format(export) -> dict[str, Any] | None:
    """The prompt format of an ``Export`` (``training.data``): its recipe's export params, or None."""
    if export is None or not getattr(export, "recipe", ""):
        return None
    return _from_recipe(export.recipe, export.kind)


def _from_recipe(recipe: str, kind: str) -> dict[str, Any] | None:
    from curation.recipe import parse_recipe

    for spec in parse_recipe(recipe).exports:
        if spec.name == kind:
            return {k: spec.params.get(k, False if k == "elements" else None) for k in KEYS}
    return None


def read_format(path: str | Path) -> dict[str, Any] | None:
    """The format recorded in a checkpoint folder, or None."""
    file = Path(str(path)) / FORMAT_FILE
    if not file.is_file():
        return None
    data = json.loads(file.read_text())
    return {k: data.get(k) for k in KEYS} if isinstance(data, dict) else None


def write_format(folder: str | Path, fmt: dict[str, Any] | None) -> None:
    if fmt is not None:
        (Path(str(folder)) / FORMAT_FILE).write_text(json.dumps(fmt, indent=2, sort_keys=True))
