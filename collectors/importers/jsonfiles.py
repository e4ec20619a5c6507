"""Shared by the per-episode-JSON datasets (GUI-Odyssey, AMEX): finding the episode
files under the paths given, reading one, and loading a screenshot by name from the
folders the dataset keeps them in, never outside them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

from collectors.importers.base import Item, dataset_files
from datalake.errors import InvalidRecord


def episode_files(paths: list[str], sidecars: dict[str, str] | None = None) -> Iterator[Path | Item]:
    """Every ``*.json`` given, or found (sorted, recursively) in a folder given; files under
    a sidecar folder of the dataset's root are passed over with a note."""
    return dataset_files(paths, pattern="*.json", sidecars=sidecars)


def read_json(path: Path) -> tuple[bytes, dict]:
    raw = path.read_bytes()
    try:
        record = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidRecord(f"not valid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise InvalidRecord("an episode file must hold a JSON object")
    return raw, record


def convert_steps(record: dict, image_key: str, folders: list[Path],
                  convert_action: Callable[[dict, tuple[int, int]], object]) -> tuple:
    """The episode's steps: each one's screenshot (``step[image_key]``) and its converted
    action, with the dataset's own step record kept in ``meta.original``."""
    from datalake.types import Observation, Step, png_size

    steps_in = record.get("steps")
    if not isinstance(steps_in, list) or not steps_in:
        raise InvalidRecord("episode has no steps list")
    steps = []
    for i, s in enumerate(steps_in):
        try:
            if not isinstance(s, dict):
                raise InvalidRecord("a step must be an object")
            png = screenshot(s.get(image_key), folders)
            action = convert_action(s, png_size(png))
        except InvalidRecord as exc:
            raise InvalidRecord(f"step {i}: {exc}") from None
        steps.append(Step(Observation(png), action, meta={"original": s}))
    return tuple(steps)


def screenshot(name, folders: list[Path]) -> bytes:
    """The PNG called ``name`` in the first of ``folders`` that has it."""
    if not isinstance(name, str) or not name or Path(name).is_absolute() or "\\" in name:
        raise InvalidRecord(f"screenshot name {name!r} must be a relative path")
    for folder in folders:
        root = folder.resolve()
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            raise InvalidRecord(f"screenshot {name!r} leaves the dataset folder")
        if path.is_file():
            return path.read_bytes()
    raise InvalidRecord(f"screenshot {name!r} is missing (looked in {', '.join(str(f) for f in folders)})")


def items(paths: list[str], known: set[str], convert: Callable[[Path, dict], object],
          lake_id_of: Callable[[Path, dict], str], sidecars: dict[str, str] | None = None) -> Iterator[Item]:
    """One item per episode file: skipped, converted by ``convert``, or rejected with the reason."""
    for path in episode_files(paths, sidecars):
        if isinstance(path, Item):
            yield path
            continue
        origin, lake_id, raw = str(path), None, b""
        try:
            raw, record = read_json(path)
            lake_id = lake_id_of(path, record)
            if lake_id in known:
                yield Item(origin, "file", lake_id, skipped=True)
                continue
            episode = convert(path, record)
        except (InvalidRecord, OSError) as exc:
            yield Item(origin, "file", lake_id, raw, error=str(exc))
        else:
            yield Item(origin, "file", lake_id, episode=episode)
