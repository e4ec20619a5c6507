"""Android in the Wild (AitW): GZIP TFRecords, one ``tf.train.Example`` per *step*.

Steps are grouped into episodes by ``episode_id`` across all the files given (an
episode is complete when it has ``episode_length`` steps, numbered 0..n-1). An episode
still incomplete after the last file whose steps are one unbroken run (cut by a shard
boundary) is held in the lake's ``import_parts`` table and completed when the shard with
its other steps is imported, in either order; one with a gap is quarantined. Actions follow the dataset's own rules
(google-research/android_in_the_wild ``action_type.py`` / ``action_matching.py``):

- ``DUAL_POINT`` (4) with touch and lift normalised in **(y, x)** order: a tap when
  the two points are at most 0.04 apart (Euclidean, normalised), else a swipe from
  touch to lift; points become pixels of the step's screenshot;
- ``TYPE`` (3) -> input_text; ``PRESS_BACK`` (5), ``PRESS_HOME`` (6), ``PRESS_ENTER`` (7) -> key;
- ``STATUS_TASK_COMPLETE`` (10) / ``STATUS_TASK_IMPOSSIBLE`` (11) -> terminate(success | infeasible).

``image/encoded`` holds the screenshot as raw uint8 pixels, ``image/height`` x
``image/width`` x ``image/channels`` (the dataset's own reader does ``decode_raw`` and a
reshape); it is encoded to PNG (``datalake.png.encode_png``: no filters, ISA-L deflate
level 1, since AitW has millions of steps) as soon as the record is read, in the reading
thread: ISA-L's deflate holds the GIL, so encoder threads only stalled the reader (at
1080x2400, 0.39x of read + decode with a pool of two against ~0.6x inline). A record
whose bytes already are a PNG is kept as it is.

Each step keeps the original ``results/*`` fields in ``meta.original`` and the UI
annotations (OCR text and icon boxes, in pixels) in ``meta.ui_annotations``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from collectors.importers import protos
from collectors.importers.base import (Item, check_unit, dataset_files, dataset_meta, episode_id, tfrecord_file,
                                       unit_to_px)
from collectors.importers.tfrecord import CorruptRecord, read_records
from datalake.errors import InvalidRecord
from datalake.png import SIGNATURE, encode_png
from datalake.types import Action, Device, Episode, Observation, Step, png_size

NAME = "aitw"
TAP_DISTANCE = 0.04  # action_matching._SWIPE_DISTANCE_THRESHOLD
ACTION_NAMES = {3: "TYPE", 4: "DUAL_POINT", 5: "PRESS_BACK", 6: "PRESS_HOME", 7: "PRESS_ENTER",
                10: "STATUS_TASK_COMPLETE", 11: "STATUS_TASK_IMPOSSIBLE"}
_KEYS = {5: "back", 6: "home", 7: "enter"}


def _one(feats: dict, name: str, default=None):
    values = feats.get(name)
    if not values:
        if default is not None:
            return default
        raise InvalidRecord(f"missing feature {name!r}")
    value = values[0]
    return value.decode("utf-8") if isinstance(value, bytes) and name not in ("image/encoded",) else value


def convert_action(feats: dict, width: int, height: int) -> tuple[Action, dict]:
    """One step's ``results/*`` -> (lake action, the original record)."""
    code = int(_one(feats, "results/action_type"))
    touch = [float(v) for v in feats.get("results/yx_touch", [])]
    lift = [float(v) for v in feats.get("results/yx_lift", [])]
    text = _one(feats, "results/type_action", b"")
    original = {"action_type": code, "action_name": ACTION_NAMES.get(code), "yx_touch": touch, "yx_lift": lift,
                "type_action": text.decode("utf-8") if isinstance(text, bytes) else text}
    if code == 4:
        if len(touch) != 2 or len(lift) != 2:
            raise InvalidRecord("DUAL_POINT needs results/yx_touch and results/yx_lift as (y, x) pairs")
        ty, tx = (check_unit(v, f"yx_touch[{i}]") for i, v in enumerate(touch))
        ly, lx = (check_unit(v, f"yx_lift[{i}]") for i, v in enumerate(lift))
        start = (unit_to_px(tx, width), unit_to_px(ty, height))
        if math.dist((ty, tx), (ly, lx)) <= TAP_DISTANCE:
            return Action("tap", x=start[0], y=start[1]), original
        return Action("swipe", x=start[0], y=start[1], x2=unit_to_px(lx, width), y2=unit_to_px(ly, height)), original
    if code == 3:
        return Action("input_text", text=original["type_action"]), original
    if code in _KEYS:
        return Action("key", key=_KEYS[code]), original
    if code in (10, 11):
        return Action("terminate", status="success" if code == 10 else "infeasible"), original
    raise InvalidRecord(f"unknown action type {code} (known: {sorted(ACTION_NAMES)})")


def _ui_annotations(feats: dict, width: int, height: int) -> list[dict]:
    pos = feats.get("image/ui_annotations_positions", [])
    texts = feats.get("image/ui_annotations_text", [])
    types = feats.get("image/ui_annotations_ui_types", [])
    out = []
    for k in range(len(pos) // 4):
        y, x, h, w = pos[4 * k:4 * k + 4]
        out.append({"text": texts[k].decode("utf-8", "replace") if k < len(texts) else "",
                    "type": types[k].decode("utf-8", "replace") if k < len(types) else "",
                    "bounds": [round(x * width), round(y * height), round((x + w) * width), round((y + h) * height)]})
    return out


def screenshot_png(feats: dict) -> bytes:
    """``image/encoded`` as PNG: raw (height, width, channels) uint8 pixels are encoded."""
    data = _one(feats, "image/encoded")
    if data[:8] == SIGNATURE:
        return data
    height, width = int(_one(feats, "image/height")), int(_one(feats, "image/width"))
    channels = int(_one(feats, "image/channels"))
    if channels not in (1, 3, 4) or height <= 0 or width <= 0 or len(data) != height * width * channels:
        raise InvalidRecord(f"image/encoded has {len(data)} bytes, not the raw {height}x{width}x{channels} "
                            "pixels the record declares (and is not a PNG)")
    return encode_png(np.frombuffer(data, np.uint8).reshape(height, width, channels))


def _png_or_error(feats: dict) -> bytes | InvalidRecord:
    """The step's PNG; the raw pixels are dropped from ``feats`` once encoded (the record itself
    is kept for quarantine), so a pending episode holds one copy of each frame, not two."""
    try:
        return screenshot_png(feats)
    except InvalidRecord as exc:
        return exc
    finally:
        feats.pop("image/encoded", None)


def _step(feats: dict, png: bytes | InvalidRecord) -> tuple[Step, tuple[int, int]]:
    if isinstance(png, InvalidRecord):
        raise png
    width, height = png_size(png)
    action, original = convert_action(feats, width, height)
    meta = {"original": original, "step_id": int(_one(feats, "step_id"))}
    annotations = _ui_annotations(feats, width, height)
    if annotations:
        meta["ui_annotations"] = annotations
    return Step(Observation(png, activity=_one(feats, "current_activity", "") or None), action, meta=meta), \
        (width, height)


def _episode(orig_id: str, steps: list[dict], pngs: list[bytes | InvalidRecord], split: str | None) -> Episode:
    converted = []
    for k, (feats, png) in enumerate(zip(steps, pngs)):
        try:
            converted.append(_step(feats, png))
        except InvalidRecord as exc:
            raise InvalidRecord(f"step {k}: {exc}") from None
    width, height = converted[0][1]
    first = steps[0]
    extra = {"device_type": _one(first, "device_type", ""), "android_api_level": int(_one(first, "android_api_level", 0))}
    return Episode(instruction=_one(first, "goal_info"), source="public", device=Device(width, height, extra=extra),
                   steps=tuple(s for s, _ in converted), episode_id=episode_id(NAME, orig_id),
                   meta={"dataset": dataset_meta(NAME, split, episode_id=orig_id)})


class _Pending:
    def __init__(self):
        # step_id -> (features, origin, locator, the raw record or its byte offset in origin, its PNG
        # or why it has none). Records read from a file are not kept: a pending episode would hold ~8 MB
        # per 1080x2400 step, and holding them makes reading ~50% slower (fresh pages for every
        # record); the few that go to quarantine or import_parts are read again (``_payloads``).
        self.steps: dict[int, tuple[dict, str, str, bytes | int, bytes | InvalidRecord | None]] = {}
        self.length: int | None = None
        self.stored: set[int] = set()  # steps an earlier import held in import_parts


def items(paths: list[str], known: set[str], split: str | None = None,
          held: Callable[[set[str]], dict[str, list[dict]]] | None = None) -> Iterator[Item]:
    """Episodes from the step records of ``paths``. An episode still incomplete after the last
    file, whose steps are one unbroken run (the rest lie before or after it in another
    shard), is completed from the records earlier imports held (``held``: lake ids ->
    import_parts rows), or else held itself (items with ``held`` set) for a later import."""
    pending: dict[str, _Pending] = {}
    for path in dataset_files(paths, accept=tfrecord_file):
        if isinstance(path, Item):
            yield path
            continue
        origin = str(path)
        for rec in read_records(path):
            locator = f"record {rec.number} at byte {rec.offset}"
            if isinstance(rec, CorruptRecord):
                yield Item(origin, locator, None, rec.data, error=f"TFRecord: {rec.reason}")
                continue
            try:
                feats = protos.features(rec.data)
                orig_id = _one(feats, "episode_id")
                step_id = int(_one(feats, "step_id"))
            except (DecodeError, InvalidRecord) as exc:
                yield Item(origin, locator, None, rec.data, error=f"not a tf.train.Example step: {exc}")
                continue
            ep = pending.setdefault(orig_id, _Pending())
            if step_id in ep.steps:
                yield Item(origin, locator, episode_id(NAME, orig_id), rec.data,
                           error=f"episode {orig_id!r} has step_id {step_id} twice (first at {ep.steps[step_id][2]})")
                continue
            ep.length = int(_one(feats, "episode_length", 0)) or ep.length
            _add(ep, step_id, feats, origin, locator, rec.offset, episode_id(NAME, orig_id) in known)
            if ep.length is not None and len(ep.steps) >= ep.length:
                yield from _finish(orig_id, pending.pop(orig_id), known, split)
    stored = held({episode_id(NAME, o) for o, ep in pending.items() if _resumable(ep)} - known) if held else {}
    for orig_id, ep in pending.items():
        for row in stored.get(episode_id(NAME, orig_id), []):
            part = int(row["part"])
            if part in ep.steps:  # this import read the same record again (a rerun of the same shard)
                if (ep.steps[part][1], ep.steps[part][2]) == (row["origin"], row["locator"]):
                    ep.stored.add(part)
                continue
            _add(ep, part, protos.features(row["payload"]), row["origin"], row["locator"], row["payload"], False)
            ep.stored.add(part)
        yield from _finish(orig_id, ep, known, split, final=held is not None)


def _add(ep: _Pending, step_id: int, feats: dict, origin: str, locator: str, raw: bytes | int,
         known: bool) -> None:
    if known:
        ep.steps[step_id] = ({}, origin, locator, b"", None)
    else:  # encoded as soon as read, so the raw pixels are freed before the next record is read
        ep.steps[step_id] = (feats, origin, locator, raw, _png_or_error(feats))


def _resumable(ep: _Pending) -> bool:
    """The steps read form one unbroken run short of the whole episode (cut by a file boundary)."""
    ids = sorted(ep.steps)
    unbroken = ids == list(range(ids[0], ids[-1] + 1))
    return unbroken and ep.length is not None and 0 <= ids[0] and ids[-1] < ep.length and len(ids) < ep.length


def _finish(orig_id: str, ep: _Pending, known: set[str], split: str | None, final: bool = False) -> Iterator[Item]:
    lake_id = episode_id(NAME, orig_id)
    first = ep.steps[min(ep.steps)]
    if lake_id in known:
        yield Item(first[1], first[2], lake_id, skipped=True)
        return
    if final and _resumable(ep):  # the rest comes with another shard: keep these records until then
        keep = sorted(set(ep.steps) - ep.stored)
        payloads = _payloads([ep.steps[k] for k in keep])
        for k, raw in zip(keep, payloads):
            yield Item(ep.steps[k][1], ep.steps[k][2], lake_id, raw, held=k)
        return
    ids = sorted(ep.steps)
    error = None
    if ids != list(range(len(ids))) or (ep.length is not None and len(ids) != ep.length):
        missing = sorted(set(range(ep.length or len(ids))) - set(ids))
        error = f"episode {orig_id!r} is incomplete: has steps {ids[:20]}, missing {missing[:20]}"
    else:
        try:
            episode = _episode(orig_id, [ep.steps[k][0] for k in ids], [ep.steps[k][4] for k in ids], split)
        except InvalidRecord as exc:
            error = str(exc)
        else:
            files = sorted({s[1] for s in ep.steps.values()})
            episode.meta["dataset"]["files"] = [Path(f).name for f in files]
            yield Item(first[1], first[2], lake_id, episode=episode)
            return
    for k, raw in zip(ids, _payloads([ep.steps[k] for k in ids])):  # nothing is lost: every step record
        _, origin, locator, _, _ = ep.steps[k]                        # of a rejected episode is quarantined
        yield Item(origin, locator, lake_id, raw, error=f"episode {orig_id!r} step {k}: {error}")


def _payloads(entries: list[tuple]) -> list[bytes]:
    """The raw records of pending steps: kept bytes as they are; the others read again from
    their file by byte offset (one pass per file, only for episodes that are rejected or held)."""
    wanted: dict[str, set[int]] = {}
    for _, origin, _, raw, _ in entries:
        if isinstance(raw, int):
            wanted.setdefault(origin, set()).add(raw)
    found: dict[tuple[str, int], bytes] = {}
    for origin, offsets in wanted.items():
        for rec in read_records(origin):
            if rec.offset in offsets and not isinstance(rec, CorruptRecord):
                found[(origin, rec.offset)] = rec.data
                if len(found) == sum(len(v) for v in wanted.values()):
                    break
    return [found.get((origin, raw), b"") if isinstance(raw, int) else raw for _, origin, _, raw, _ in entries]
