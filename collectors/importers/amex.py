"""AMEX (Android Multi-annotation EXpo): one JSON file per episode plus screenshots;
absolute pixel coordinates with the device's size on every step.

    {"episode_id": ..., "instruction": ..., "steps": [{"step_id": 0, "image_path": "<name>.png",
     "device_dim": [1080, 2400], "action": "TAP", "touch_coord": [x, y], "lift_coord": [x, y],
     "type_text": ""}, ...]}

Actions: TAP -> tap at touch_coord; SWIPE -> swipe from touch_coord to lift_coord;
TYPE -> input_text(type_text); PRESS_BACK / PRESS_HOME / PRESS_ENTER -> key;
TASK_COMPLETE -> terminate(success); TASK_IMPOSSIBLE -> terminate(infeasible).
Coordinates are checked against ``device_dim`` and scaled to the screenshot when the
screenshot was stored at another size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from collectors.importers import jsonfiles
from collectors.importers.base import Item, abs_px, dataset_meta, episode_id
from datalake.errors import InvalidRecord
from datalake.types import Action, Device, Episode

NAME = "amex"
SIDECARS = {"element_anno": "AMEX's per-screenshot element annotations, not episodes"}
_KEYS = {"PRESS_BACK": "back", "PRESS_HOME": "home", "PRESS_ENTER": "enter"}


def _point(coord, dim: tuple[int, int], size: tuple[int, int], where: str) -> tuple[int, int]:
    if not isinstance(coord, list) or len(coord) != 2:
        raise InvalidRecord(f"{where} must be [x, y], got {coord!r}")
    x, y = abs_px(coord[0], dim[0], f"{where}.x"), abs_px(coord[1], dim[1], f"{where}.y")
    if dim == size:
        return x, y
    return min(round(x * size[0] / dim[0]), size[0] - 1), min(round(y * size[1] / dim[1]), size[1] - 1)


def convert_action(step: dict, size: tuple[int, int]) -> Action:
    dim = step.get("device_dim")
    if not (isinstance(dim, list) and len(dim) == 2 and all(isinstance(v, int) and v > 0 for v in dim)):
        raise InvalidRecord(f"device_dim must be [width, height], got {dim!r}")
    dim = (dim[0], dim[1])
    if abs(dim[0] / dim[1] - size[0] / size[1]) > 0.02:
        raise InvalidRecord(f"screenshot is {size[0]}x{size[1]}, not the shape of device_dim {dim[0]}x{dim[1]}")
    kind = step.get("action")
    if kind == "TAP":
        x, y = _point(step.get("touch_coord"), dim, size, "touch_coord")
        return Action("tap", x=x, y=y)
    if kind == "SWIPE":
        x, y = _point(step.get("touch_coord"), dim, size, "touch_coord")
        x2, y2 = _point(step.get("lift_coord"), dim, size, "lift_coord")
        return Action("swipe", x=x, y=y, x2=x2, y2=y2)
    if kind == "TYPE":
        return Action("input_text", text=step.get("type_text"))
    if kind in _KEYS:
        return Action("key", key=_KEYS[kind])
    if kind in ("TASK_COMPLETE", "TASK_IMPOSSIBLE"):
        return Action("terminate", status="success" if kind == "TASK_COMPLETE" else "infeasible")
    raise InvalidRecord(f"unknown action type {kind!r}")


def _folders(path: Path) -> list[Path]:
    return [path.parent, path.parent.parent / "screenshot", path.parent.parent / "screenshots",
            path.parent / "screenshots"]


def convert(path: Path, record: dict, split: str | None = None) -> Episode:
    steps = jsonfiles.convert_steps(record, "image_path", _folders(path), convert_action)
    width, height = steps[0].observation.size
    return Episode(instruction=record.get("instruction") or "", source="public", device=Device(width, height),
                   steps=steps, episode_id=lake_id(path, record),
                   meta={"dataset": dataset_meta(NAME, split, episode_id=record.get("episode_id") or path.stem,
                                                 file=path.name)})


def lake_id(path: Path, record: dict) -> str:
    return episode_id(NAME, record.get("episode_id") or path.stem)


def items(paths: list[str], known: set[str], split: str | None = None) -> Iterator[Item]:
    return jsonfiles.items(paths, known, lambda p, r: convert(p, r, split), lake_id, SIDECARS)
