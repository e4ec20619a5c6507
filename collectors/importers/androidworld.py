"""AndroidWorld runs: the checkpointer's ``{task}.pkl.gz`` files, each a gzipped pickle
of a list of episode dicts (``goal``, ``task_template``, ``is_successful``,
``episode_data`` = the agent's step data as {key: [value per step]}, ``agent_name``,
``instance_id``, ``seed``, ``finish_dtime``, ``exception_info``, ...).

Each episode becomes ``source=agent`` with the task verifier's ``is_successful`` as
outcome (``verified_by=verifier``; 1.0 is success, less is failure, NaN/None unknown)
and as score. Steps take the screenshot before the action (``raw_screenshot`` or
``before_screenshot``, an RGB array, encoded to PNG) and the ``JSONAction`` in
``action_output_json``; click/long_press/input_text by element ``index`` use the
centre of that element in the step's UI elements.

Pickles can run code when loaded: this reader resolves only numpy arrays, a few
builtins and android_world's plain data classes (as inert stand-ins); any other
global in the file is refused and the file quarantined.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import pickle
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

from collectors.importers.base import Item, abs_px, dataset_meta, episode_id
from datalake.errors import InvalidRecord
from datalake.png import encode_png
from datalake.types import Action, Device, Episode, Observation, Step

NAME = "androidworld"
_ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
            ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"), ("numpy", "ndarray"),
            ("numpy", "dtype"), ("copyreg", "_reconstructor"), ("builtins", "object"), ("builtins", "set"),
            ("builtins", "frozenset"), ("collections", "OrderedDict"), ("datetime", "datetime"),
            ("datetime", "timedelta"), ("datetime", "timezone")}
_SCREENSHOT_KEYS = ("raw_screenshot", "before_screenshot", "screenshot")
_ELEMENT_KEYS = ("before_ui_elements", "ui_elements", "before_element_list")
_KEYS = {"navigate_home": "home", "navigate_back": "back", "keyboard_enter": "enter"}
_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}


class StandIn:
    """An android_world object (JSONAction, UIElement, BoundingBox, ...) as plain attributes."""

    aw_class = "?"

    def __setstate__(self, state):
        if isinstance(state, tuple):  # (dict, slots) from classes with __slots__
            state = {**(state[0] or {}), **(state[1] or {})}
        self.__dict__.update(state or {})

    def to_dict(self) -> dict:
        return {k: _plain(v) for k, v in self.__dict__.items()}


class _Unpickler(pickle.Unpickler):
    _classes: dict[tuple[str, str], type] = {}

    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        if module.split(".")[0] == "android_world":
            key = (module, name)
            if key not in self._classes:
                self._classes[key] = type(name, (StandIn,), {"aw_class": f"{module}.{name}"})
            return self._classes[key]
        raise pickle.UnpicklingError(f"refusing to load global {module}.{name} from an AndroidWorld pickle")


def load_episodes(path: Path) -> list:
    try:
        with gzip.open(path, "rb") as fh:
            data = _Unpickler(fh).load()
    except (pickle.UnpicklingError, EOFError, OSError, ValueError, AttributeError, ImportError) as exc:
        raise InvalidRecord(f"not a readable AndroidWorld checkpoint: {exc}") from None
    return data if isinstance(data, list) else [data]


def _plain(value):
    if isinstance(value, StandIn):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return f"<array {value.dtype} {list(value.shape)}>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _png(array) -> bytes:
    if not isinstance(array, np.ndarray) or array.ndim != 3 or array.shape[2] not in (3, 4) or array.dtype != np.uint8:
        raise InvalidRecord(f"screenshot is not an RGB(A) uint8 array: {_plain(array)}")
    return encode_png(array)  # lossless, no filters, fast deflate (as for AitW's raw pixels)


def _element_centre(elements, index, size) -> tuple[int, int]:
    if not isinstance(elements, list) or not isinstance(index, int) or not 0 <= index < len(elements):
        raise InvalidRecord(f"element index {index!r} is not in the step's UI elements")
    box = getattr(elements[index], "bbox_pixels", None)
    if box is None:
        raise InvalidRecord(f"UI element {index} has no bbox_pixels")
    return (abs_px((box.x_min + box.x_max) // 2, size[0], "element x"),
            abs_px((box.y_min + box.y_max) // 2, size[1], "element y"))


def convert_action(a, elements, size: tuple[int, int]) -> Action:
    if a is None:
        raise InvalidRecord("the agent produced no parseable action (action_output_json is None)")
    get = (a.get if isinstance(a, dict) else lambda k: getattr(a, k, None))
    kind = get("action_type")

    def point() -> dict:
        if get("x") is not None and get("y") is not None:
            return {"x": abs_px(get("x"), size[0], "x"), "y": abs_px(get("y"), size[1], "y")}
        if get("index") is not None:
            x, y = _element_centre(elements, get("index"), size)
            return {"x": x, "y": y}
        return {}

    if kind in ("click", "double_tap", "long_press"):
        p = point()
        if not p:
            raise InvalidRecord(f"{kind} has neither x/y nor an element index")
        return Action("tap" if kind == "click" else kind, **p)
    if kind == "input_text":
        return Action("input_text", text=get("text"), **point(), **({"clear": True} if get("clear_text") else {}))
    if kind == "scroll":
        return Action("scroll", direction=get("direction"), **point())
    if kind == "swipe":  # the finger's direction: content moves the other way
        return Action("scroll", direction=_OPPOSITE.get(get("direction"), get("direction")))
    if kind in _KEYS:
        return Action("key", key=_KEYS[kind])
    if kind == "open_app":
        return Action("open_app", app=get("app_name"))
    if kind == "wait":
        return Action("wait")
    if kind == "answer":
        return Action("answer", text=get("text"))
    if kind == "status":
        status = get("goal_status")
        if status not in ("complete", "infeasible"):
            raise InvalidRecord(f"status action with goal_status {status!r}")
        return Action("terminate", status="success" if status == "complete" else "infeasible")
    raise InvalidRecord(f"unknown action type {kind!r}")


def _outcome(value) -> tuple[str, float | None]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "unknown", None
    value = float(value)
    return ("success" if value >= 1.0 else "failure"), min(max(value, 0.0), 1.0)


def _missing(value) -> bool:
    """None, or the NaN AndroidWorld writes for what a raised run never produced (NaN is truthy)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _episode_data(record: dict) -> dict:
    data = record.get("episode_data")
    if isinstance(data, dict):
        return data
    what = "NaN" if isinstance(data, float) and math.isnan(data) else "missing" if data is None else \
        f"a {type(data).__name__}, not a dict"
    exception = record.get("exception_info")
    why = f" (the run raised: {str(_plain(exception))[-300:]})" if not _missing(exception) and exception else ""
    raise InvalidRecord(f"episode_data is {what}{why}")


def convert(record: dict, path: Path, k: int, split: str | None) -> Episode:
    data = _episode_data(record)
    shots = next((data[key] for key in _SCREENSHOT_KEYS if not _missing(data.get(key)) and len(data[key])), None)
    actions = data.get("action_output_json")
    if _missing(shots) or _missing(actions):
        raise InvalidRecord(f"episode_data has no screenshots ({'/'.join(_SCREENSHOT_KEYS)}) or action_output_json")
    elements = next((data[key] for key in _ELEMENT_KEYS if isinstance(data.get(key), list) and data[key]),
                    [None] * len(actions))
    steps = []
    for i, action in enumerate(actions):
        try:
            png = _png(shots[i] if i < len(shots) else None)
            size = Image.open(io.BytesIO(png)).size
            converted = convert_action(action, elements[i] if i < len(elements) else None, size)
        except InvalidRecord as exc:
            raise InvalidRecord(f"step {i}: {exc}") from None
        original = _plain(action)
        meta = {"original": original}
        for key in ("action_reason", "summary"):
            if isinstance(data.get(key), list) and i < len(data[key]) and isinstance(data[key][i], str):
                meta[key] = data[key][i]
        raw = data.get("action_output")
        steps.append(Step(Observation(png), converted, meta=meta,
                          raw_output=raw[i] if isinstance(raw, list) and i < len(raw) and isinstance(raw[i], str)
                          else None))
    outcome, score = _outcome(record.get("is_successful"))
    width, height = steps[0].observation.size
    exception = None if _missing(record.get("exception_info")) else record.get("exception_info")
    goal = record.get("goal")
    return Episode(instruction=goal if isinstance(goal, str) else "", source="agent", device=Device(width, height),
                   steps=tuple(steps), episode_id=lake_id(record, path, k),
                   task=record.get("task_template") if isinstance(record.get("task_template"), str) else None,
                   outcome=outcome, verified_by="verifier" if outcome != "unknown" else "none", score=score,
                   policy=record.get("agent_name") if isinstance(record.get("agent_name"), str) else None,
                   failure_reason="exception" if exception else None,
                   meta={"dataset": dataset_meta(NAME, split, file=path.name, index=k,
                                                 instance_id=_plain(record.get("instance_id")),
                                                 seed=_plain(record.get("seed")),
                                                 finish_dtime=_plain(record.get("finish_dtime")),
                                                 exception_info=_plain(exception) if exception else None)})


def lake_id(record: dict, path: Path, k: int) -> str:
    key = json.dumps([_plain(record.get(f)) for f in ("task_template", "instance_id", "seed", "agent_name",
                                                       "finish_dtime", "goal")] + [path.name, k], default=str)
    return episode_id(NAME, f"{record.get('task_template')}-{hashlib.sha1(key.encode()).hexdigest()[:12]}")


def items(paths: list[str], known: set[str], split: str | None = None) -> Iterator[Item]:
    for p in map(Path, paths):
        files = sorted(p.rglob("*.pkl.gz")) if p.is_dir() else [p]
        for path in files:
            try:
                records = load_episodes(path)
            except InvalidRecord as exc:
                yield Item(str(path), "file", None, path.read_bytes()[:1 << 20], error=str(exc))
                continue
            for k, record in enumerate(records):
                locator = f"episode {k}"
                if not isinstance(record, dict):
                    yield Item(str(path), locator, None, repr(record)[:10000].encode(), error="episode is not a dict")
                    continue
                lid = lake_id(record, path, k)
                if lid in known:
                    yield Item(str(path), locator, lid, skipped=True)
                    continue
                try:
                    episode = convert(record, path, k, split)
                except (InvalidRecord, TypeError, AttributeError, KeyError, IndexError) as exc:
                    reason = str(exc) if isinstance(exc, InvalidRecord) else \
                        f"episode is not in AndroidWorld's shape: {type(exc).__name__}: {exc}"
                    payload = json.dumps(_plain(record), ensure_ascii=False).encode()
                    yield Item(str(path), locator, lid, payload, error=reason)
                else:
                    yield Item(str(path), locator, lid, episode=episode)
