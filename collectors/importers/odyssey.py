"""GUI-Odyssey: one JSON file per episode (``annotations/<id>.json``) plus screenshots
(``screenshots/<name>.png``); coordinates on a 0-1000 grid over the screenshot.

    {"episode_id": ..., "device_info": {"device_name": ..., "w": 1080, "h": 2400, ...},
     "task_info": {"instruction": ..., "task": ..., "category": ..., "app": [...], "meta_task": ...},
     "steps": [{"step": 0, "screenshot": "<name>.png", "action": "CLICK", "info": [[x, y]]}, ...]}

Actions: CLICK [[x, y]] -> tap (CLICK with info KEY_HOME / KEY_BACK / KEY_APPSELECT ->
key); SCROLL [[x1, y1], [x2, y2]] -> swipe from start to end (the finger's path);
LONG_PRESS -> long_press; TEXT / TYPE -> input_text; COMPLETE -> terminate(success);
IMPOSSIBLE / INCOMPLETE -> terminate(infeasible); HOME / BACK -> key.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from collectors.importers import jsonfiles
from collectors.importers.base import Item, dataset_meta, episode_id, rel1000_to_px
from datalake.errors import InvalidRecord
from datalake.types import Action, Device, Episode

NAME = "gui-odyssey"
SIDECARS = {"splits": "GUI-Odyssey's split lists (episode files per split), not episodes"}
_KEYS = {"KEY_HOME": "home", "KEY_BACK": "back", "KEY_APPSELECT": "app_switch", "HOME": "home", "BACK": "back"}


def _points(info, n: int, size: tuple[int, int]) -> list[tuple[int, int]]:
    if not isinstance(info, list) or len(info) != n or not all(isinstance(p, list) and len(p) == 2 for p in info):
        raise InvalidRecord(f"info must be {n} [x, y] point(s), got {info!r}")
    return [(rel1000_to_px(x, size[0], "x"), rel1000_to_px(y, size[1], "y")) for x, y in info]


def convert_action(step: dict, size: tuple[int, int]) -> Action:
    kind, info = step.get("action"), step.get("info")
    if kind == "CLICK" and isinstance(info, str) and info in _KEYS:
        return Action("key", key=_KEYS[info])
    if kind in ("HOME", "BACK"):
        return Action("key", key=_KEYS[kind])
    if kind == "CLICK":
        (x, y), = _points(info, 1, size)
        return Action("tap", x=x, y=y)
    if kind == "LONG_PRESS":
        (x, y), = _points(info, 1, size)
        return Action("long_press", x=x, y=y)
    if kind == "SCROLL":
        (x, y), (x2, y2) = _points(info, 2, size)
        return Action("swipe", x=x, y=y, x2=x2, y2=y2)
    if kind in ("TEXT", "TYPE"):
        return Action("input_text", text=info)
    if kind == "COMPLETE":
        return Action("terminate", status="success")
    if kind in ("IMPOSSIBLE", "INCOMPLETE"):
        return Action("terminate", status="infeasible")
    raise InvalidRecord(f"unknown action type {kind!r}")


def _folders(path: Path) -> list[Path]:
    return [path.parent, path.parent.parent / "screenshots", path.parent / "screenshots"]


def convert(path: Path, record: dict, split: str | None = None) -> Episode:
    task = record.get("task_info") or {}
    steps = jsonfiles.convert_steps(record, "screenshot", _folders(path), convert_action)
    width, height = steps[0].observation.size
    device_info = record.get("device_info") or {}
    apps = task.get("app")
    return Episode(instruction=task.get("instruction") or "", source="public",
                   device=Device(width, height, extra={"model": device_info.get("device_name")}
                                 if device_info.get("device_name") else {}),
                   steps=steps, episode_id=lake_id(path, record), category=task.get("category"),
                   task=task.get("meta_task") or task.get("task"),
                   app=", ".join(apps) if isinstance(apps, list) else apps,
                   meta={"dataset": dataset_meta(NAME, split, episode_id=record.get("episode_id") or path.stem,
                                                 file=path.name, device_info=device_info or None)})


def lake_id(path: Path, record: dict) -> str:
    return episode_id(NAME, record.get("episode_id") or path.stem)


def items(paths: list[str], known: set[str], split: str | None = None) -> Iterator[Item]:
    return jsonfiles.items(paths, known, lambda p, r: convert(p, r, split), lake_id, SIDECARS)
