"""The shared vocabulary: Action, Observation, Step, Episode.

Real phones, mock phones, the lake, curation and training all speak these types.
Every type is a frozen dataclass validated in ``__post_init__`` and converts to and
from plain JSON dicts (``to_dict`` / ``from_dict``). ``to_dict`` writes keys in a
fixed order and omits unset optional fields, so ``to_dict(from_dict(d)) == d`` for a
dict in that canonical form; that is what makes lake exports byte-exact.

Coordinates are device pixels of the screenshot the action was taken on.
``scroll.direction`` is the direction the content moves into view (AndroidWorld's
convention); ``swipe`` names the finger's path from (x, y) to (x2, y2).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import uuid
from dataclasses import dataclass, field, fields
from typing import Any

from datalake.errors import InvalidAction, InvalidRecord

ACTION_VERSION = 1

ACTION_TYPES = (
    "tap", "double_tap", "long_press", "swipe", "scroll", "input_text", "key",
    "open_app", "wait", "answer", "ask_user", "shell", "tool", "terminate",
)
KEYS = ("back", "home", "enter", "app_switch")
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
TERMINATE_STATUSES = ("success", "infeasible")
OUTCOMES = ("success", "failure", "unknown")
VERIFIERS = ("verifier", "human", "judge", "none")
SOURCES = ("human", "agent", "oracle", "rollout", "public", "corrected")  # corrected: rollout.corrections
PURPOSES = ("train", "eval")  # eval episodes measure a policy and are never selected for training by default
PHONE_KINDS = ("real", "mock")

# Fields each action type must have, and the optional ones it may have. Any other
# field is an error: silently dropping a field would lose data.
_REQUIRED: dict[str, tuple[str, ...]] = {
    "tap": ("x", "y"),
    "double_tap": ("x", "y"),
    "long_press": ("x", "y"),
    "swipe": ("x", "y", "x2", "y2"),
    "scroll": ("direction",),
    "input_text": ("text",),
    "key": ("key",),
    "open_app": ("app",),
    "wait": (),
    "answer": ("text",),
    "ask_user": ("text",),
    "shell": ("command",),
    "tool": ("name",),
    "terminate": ("status",),
}
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "tap": ("element",),
    "double_tap": ("element",),
    "long_press": ("duration_ms", "element"),
    "swipe": ("duration_ms",),
    "scroll": ("x", "y", "element"),
    "input_text": ("x", "y", "element", "clear"),
    "key": (),
    "open_app": (),
    "wait": ("seconds",),
    "answer": (),
    "ask_user": (),
    "shell": (),
    "tool": ("args",),
    "terminate": (),
}
_POINT_FIELDS = ("x", "y", "x2", "y2")


def _check_text(value: Any, where: str) -> str:
    """A string that can be stored as UTF-8 (rejects lone surrogates)."""
    if not isinstance(value, str):
        raise InvalidRecord(f"{where} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRecord(f"{where} is not valid UTF-8 text ({exc.reason} at {exc.start})") from None
    return value


def _check_number(value: Any, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidAction(f"{where} must be a finite number, got {value!r}")
    return value


@dataclass(frozen=True)
class Target:
    """The UI element an action was aimed at, when the UI tree is known."""

    index: int | None = None
    resource_id: str | None = None
    text: str | None = None
    content_desc: str | None = None
    class_name: str | None = None
    bounds: tuple[int, int, int, int] | None = None  # x1, y1, x2, y2 in device px

    def __post_init__(self) -> None:
        if self.bounds is not None:
            b = tuple(self.bounds)
            if len(b) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in b):
                raise InvalidAction(f"element bounds must be four integers [x1, y1, x2, y2], got {self.bounds!r}")
            object.__setattr__(self, "bounds", b)
        for name in ("resource_id", "text", "content_desc", "class_name"):
            value = getattr(self, name)
            if value is not None:
                _check_text(value, f"element.{name}")
        if self.index is not None and (not isinstance(self.index, int) or isinstance(self.index, bool)):
            raise InvalidAction(f"element.index must be an integer, got {self.index!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = list(value) if f.name == "bounds" else value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Target:
        if not isinstance(data, dict):
            raise InvalidAction(f"element must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidAction(f"unknown element field(s): {', '.join(unknown)}")
        data = dict(data)
        if isinstance(data.get("bounds"), list):
            data["bounds"] = tuple(data["bounds"])
        return cls(**data)


@dataclass(frozen=True)
class Action:
    """One action of the vocabulary in DESIGN.md; which fields apply depends on ``type``."""

    type: str
    x: int | float | None = None
    y: int | float | None = None
    x2: int | float | None = None
    y2: int | float | None = None
    duration_ms: int | None = None
    direction: str | None = None
    text: str | None = None
    clear: bool | None = None
    key: str | None = None
    app: str | None = None
    seconds: int | float | None = None
    command: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None
    status: str | None = None
    element: Target | None = None

    def __post_init__(self) -> None:
        if self.type not in _REQUIRED:
            raise InvalidAction(f"unknown action type {self.type!r} (known: {', '.join(ACTION_TYPES)})")
        allowed = set(_REQUIRED[self.type]) | set(_OPTIONAL[self.type]) | {"type"}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                if f.name in _REQUIRED[self.type]:
                    raise InvalidAction(f"{self.type} action is missing required field {f.name!r}")
            elif f.name not in allowed:
                raise InvalidAction(f"{self.type} action does not take field {f.name!r}")
        self._check_values()

    def _check_values(self) -> None:
        for name in _POINT_FIELDS:
            value = getattr(self, name)
            if value is not None:
                _check_number(value, f"{self.type}.{name}")
        if self.duration_ms is not None and (not isinstance(self.duration_ms, int) or self.duration_ms < 0):
            raise InvalidAction(f"{self.type}.duration_ms must be a non-negative integer, got {self.duration_ms!r}")
        if self.seconds is not None and _check_number(self.seconds, "wait.seconds") < 0:
            raise InvalidAction(f"wait.seconds must not be negative, got {self.seconds!r}")
        if self.direction is not None and self.direction not in SCROLL_DIRECTIONS:
            raise InvalidAction(f"scroll.direction must be one of {SCROLL_DIRECTIONS}, got {self.direction!r}")
        if self.key is not None and self.key not in KEYS:
            raise InvalidAction(f"key must be one of {KEYS}, got {self.key!r}")
        if self.status is not None and self.status not in TERMINATE_STATUSES:
            raise InvalidAction(f"terminate.status must be one of {TERMINATE_STATUSES}, got {self.status!r}")
        if self.clear is not None and not isinstance(self.clear, bool):
            raise InvalidAction(f"input_text.clear must be true or false, got {self.clear!r}")
        for name in ("text", "app", "command", "name"):
            value = getattr(self, name)
            if value is not None:
                _check_text(value, f"{self.type}.{name}")
        if self.args is not None:
            if not isinstance(self.args, dict):
                raise InvalidAction(f"tool.args must be an object, got {type(self.args).__name__}")
            try:
                json.dumps(self.args, ensure_ascii=False).encode("utf-8")
            except (TypeError, ValueError, UnicodeEncodeError) as exc:
                raise InvalidAction(f"tool.args is not JSON-serialisable UTF-8: {exc}") from None
        if self.element is not None and not isinstance(self.element, Target):
            raise InvalidAction("element must be a Target")

    @property
    def point(self) -> tuple[float, float] | None:
        """The (x, y) the finger touches first, if the action has one."""
        return None if self.x is None or self.y is None else (self.x, self.y)

    def points(self) -> list[tuple[float, float]]:
        """Every screen point the action touches (for bounds checks and drawing)."""
        pts = [] if self.point is None else [self.point]
        if self.x2 is not None and self.y2 is not None:
            pts.append((self.x2, self.y2))
        return pts

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = value.to_dict() if f.name == "element" else value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any) -> Action:
        if not isinstance(data, dict):
            raise InvalidAction(f"action must be an object, got {type(data).__name__}")
        if "type" not in data:
            raise InvalidAction("action is missing required field 'type'")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidAction(f"unknown field(s) in {data.get('type')!r} action: {', '.join(unknown)}")
        kwargs = dict(data)
        if kwargs.get("element") is not None:
            kwargs["element"] = Target.from_dict(kwargs["element"])
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> Action:
        return cls.from_dict(json.loads(text))


class cached_property:  # noqa: N801 - a drop-in for functools.cached_property
    """Computed once per instance, then read from the instance dict.

    functools.cached_property holds a class-wide lock on Python 3.11, which serialises
    frame hashing across threads; this one lets idempotent computations race freely.
    """

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (no decoding)."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise InvalidRecord("screenshot is not a PNG (bad signature or missing IHDR)")
    return struct.unpack(">II", data[16:24])


@dataclass(frozen=True)
class Observation:
    """What a phone shows at one moment: the same shape for real and mock phones."""

    screenshot: bytes  # PNG bytes, stored as they came
    ui_tree: str | None = None  # uiautomator dump XML
    package: str | None = None
    activity: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.screenshot, (bytes, bytearray)):
            raise InvalidRecord("observation.screenshot must be PNG bytes")
        png_size(self.screenshot)
        for name in ("ui_tree", "package", "activity"):
            value = getattr(self, name)
            if value is not None:
                _check_text(value, f"observation.{name}")

    @cached_property
    def size(self) -> tuple[int, int]:
        return png_size(self.screenshot)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.screenshot).hexdigest()


@dataclass(frozen=True)
class Step:
    observation: Observation
    action: Action
    thought: str | None = None
    raw_output: str | None = None  # a model's text before parsing, when a policy acted
    # Per-step facts that are not the action: e.g. ``pairing`` ("ok" | "uncertain") and
    # ``tree_lag_ms`` from the recorder, ``detour`` from mock collection, ``original``
    # (the source dataset's action record) from importers. JSON-serialisable.
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.action, Action):
            raise InvalidRecord("step.action must be an Action")
        if not isinstance(self.meta, dict):
            raise InvalidRecord(f"step.meta must be an object, got {type(self.meta).__name__}")
        for name in ("thought", "raw_output"):
            value = getattr(self, name)
            if value is not None:
                _check_text(value, f"step.{name}")


@dataclass(frozen=True)
class Device:
    """The phone an episode ran on. ``extra`` keeps anything else (model, serial, dpi)."""

    width: int
    height: int
    kind: str = "real"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("width", "height"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise InvalidRecord(f"device.{name} must be a positive integer, got {value!r}")
        if self.kind not in PHONE_KINDS:
            raise InvalidRecord(f"device.kind must be one of {PHONE_KINDS}, got {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"width": self.width, "height": self.height, "kind": self.kind}
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Device:
        if not isinstance(data, dict):
            raise InvalidRecord(f"device must be an object, got {type(data).__name__}")
        for name in ("width", "height"):
            if name not in data:
                raise InvalidRecord(f"device is missing required field {name!r}")
        extra = {k: v for k, v in data.items() if k not in ("width", "height", "kind")}
        return cls(width=data["width"], height=data["height"], kind=data.get("kind", "real"), extra=extra)


@dataclass(frozen=True)
class Episode:
    """An instruction, a phone, the steps taken, and the outcome with who verified it.

    A model's claim of success is a ``terminate`` action, not an outcome.
    """

    instruction: str
    source: str
    device: Device
    steps: tuple[Step, ...]
    episode_id: str = ""
    app: str | None = None
    category: str | None = None
    task: str | None = None
    outcome: str = "unknown"
    verified_by: str = "none"
    policy: str | None = None
    round: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    purpose: str = "train"  # train | eval (schema v2)
    failure_reason: str | None = None  # e.g. policy_error, device_offline, max_steps (schema v2)
    score: float | None = None  # the verifier's score in [0, 1], when one ran (schema v2)

    def __post_init__(self) -> None:
        _check_text(self.instruction, "instruction")
        if self.purpose not in PURPOSES:
            raise InvalidRecord(f"purpose must be one of {PURPOSES}, got {self.purpose!r}")
        if self.failure_reason is not None:
            _check_text(self.failure_reason, "failure_reason")
        if self.score is not None:
            if isinstance(self.score, bool) or not isinstance(self.score, (int, float)) \
                    or not (0.0 <= float(self.score) <= 1.0):
                raise InvalidRecord(f"score must be a number in [0, 1], got {self.score!r}")
            object.__setattr__(self, "score", float(self.score))
        if not isinstance(self.meta, dict):
            raise InvalidRecord(f"episode.meta must be an object, got {type(self.meta).__name__}")
        if not self.instruction.strip():
            raise InvalidRecord("instruction must not be empty")
        if self.source not in SOURCES:
            raise InvalidRecord(f"source must be one of {SOURCES}, got {self.source!r}")
        if self.outcome not in OUTCOMES:
            raise InvalidRecord(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if self.verified_by not in VERIFIERS:
            raise InvalidRecord(f"verified_by must be one of {VERIFIERS}, got {self.verified_by!r}")
        if self.round is not None and (not isinstance(self.round, int) or isinstance(self.round, bool) or self.round < 0):
            raise InvalidRecord(f"round must be a non-negative integer, got {self.round!r}")
        for name in ("app", "category", "task", "policy"):
            value = getattr(self, name)
            if value is not None:
                _check_text(value, name)
        object.__setattr__(self, "steps", tuple(self.steps))
        if not self.steps:
            raise InvalidRecord("episode has no steps")
        for i, step in enumerate(self.steps):
            self._check_step_on_screen(i, step)
        if not self.episode_id:
            object.__setattr__(self, "episode_id", self.content_id())
        _check_text(self.episode_id, "episode_id")

    def _check_step_on_screen(self, i: int, step: Step) -> None:
        width, height = step.observation.size
        for x, y in step.action.points():
            if not (0 <= x < width and 0 <= y < height):
                raise InvalidRecord(
                    f"step {i}: {step.action.type} at ({x}, {y}) is outside the {width}x{height} screenshot"
                )

    def content_id(self) -> str:
        """A deterministic id from the content, so re-importing an id-less record is idempotent."""
        h = hashlib.sha256()
        h.update(json.dumps([self.instruction, self.source, self.device.to_dict()], sort_keys=True).encode())
        # a task episode's instance (content fingerprint) and seed: two jobs whose episodes look alike never collide
        ident = {k: self.meta[k] for k in ("instance", "seed") if k in self.meta}
        if ident:
            h.update(json.dumps(ident, sort_keys=True, default=str).encode())
        for step in self.steps:
            h.update(step.observation.sha256.encode())
            h.update(step.action.to_json().encode())
        return str(uuid.UUID(bytes=h.digest()[:16], version=5))
