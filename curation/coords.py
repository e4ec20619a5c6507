"""Coordinate conventions for models: adapters between device pixels and what a model sees.

Stored actions are always in device pixels of their screenshot (``abs``). Models use:

- ``abs``: device pixels, unchanged;
- ``resized``: pixels of the image after the model's own resize (Qwen2.5-VL style:
  both sides a multiple of ``factor`` = 28, total pixels within [min_pixels, max_pixels]);
  ``resized:F:MIN:MAX`` names another processor's geometry (factor, min and max
  pixels), e.g. ``resized:32:1024:8192`` for the tiny Qwen3-VL's 16 px patches merged
  2x2 under its 8192-pixel cap (``training.processor.resized_convention`` reads it off
  a processor, so the convention is the resize the processor really applies);
- ``rel1000``: 0-1000 across each side (Qwen3-VL, UI-TARS, OS-Atlas);
- ``rel1``: 0-1 across each side.

``to_model`` and ``from_model`` are exact inverses on floats. Text formats round what
the model sees (``round_for``): integers for abs and resized, 4 decimals for rel1, and
for rel1000 integers when no side of the screen exceeds 2000 px, else one decimal. A
whole rel1000 unit is side/1000 px, so integers alone would miss by up to 1.56 px on a
3120 px side; with these rules every round trip through text stays within 1 px
(``decimals_for`` says how many decimals a screen gets).
"""

from __future__ import annotations

import math

CONVENTIONS = ("abs", "resized", "rel1000", "rel1")
QWEN_FACTOR = 28
QWEN_MIN_PIXELS = 56 * 56
QWEN_MAX_PIXELS = 12_845_056  # 14 * 14 * 4 * 16384, Qwen2.5-VL's default


def check_convention(convention: str) -> str:
    if convention not in CONVENTIONS and not _is_resized_geometry(convention):
        raise ValueError(f"unknown coordinate convention {convention!r} (known: {', '.join(CONVENTIONS)}, "
                         "or resized:FACTOR:MIN_PIXELS:MAX_PIXELS)")
    return convention


def resized_geometry(convention: str) -> tuple[int, int, int]:
    """(factor, min_pixels, max_pixels) of a ``resized`` convention."""
    if convention == "resized":
        return QWEN_FACTOR, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS
    if not _is_resized_geometry(convention):
        raise ValueError(f"{convention!r} is not a resized convention (resized or resized:FACTOR:MIN:MAX)")
    factor, lo, hi = (int(v) for v in convention.split(":")[1:])
    return factor, lo, hi


def resized_name(factor: int, min_pixels: int, max_pixels: int) -> str:
    """The convention name of a processor's resize geometry."""
    if (factor, min_pixels, max_pixels) == (QWEN_FACTOR, QWEN_MIN_PIXELS, QWEN_MAX_PIXELS):
        return "resized"
    return f"resized:{int(factor)}:{int(min_pixels)}:{int(max_pixels)}"


def _is_resized_geometry(convention: str) -> bool:
    parts = str(convention).split(":")
    if len(parts) != 4 or parts[0] != "resized" or not all(p.isdigit() for p in parts[1:]):
        return False
    factor, lo, hi = (int(p) for p in parts[1:])
    return factor > 0 and 0 < lo <= hi


def smart_resize(width: int, height: int, factor: int = QWEN_FACTOR, min_pixels: int = QWEN_MIN_PIXELS,
                 max_pixels: int = QWEN_MAX_PIXELS) -> tuple[int, int]:
    """The (width, height) a Qwen2.5-VL-style processor resizes an image to."""
    h = max(factor, round(height / factor) * factor)
    w = max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return w, h


def _scale(convention: str, size: tuple[int, int]) -> tuple[float, float]:
    """Model units per device pixel along x and y."""
    width, height = size
    if convention == "abs":
        return 1.0, 1.0
    if convention == "resized" or _is_resized_geometry(convention):
        rw, rh = smart_resize(width, height, *resized_geometry(convention))
        return rw / width, rh / height
    if convention == "rel1000":
        return 1000 / width, 1000 / height
    if convention == "rel1":
        return 1 / width, 1 / height
    check_convention(convention)
    raise AssertionError("unreachable")


def to_model(x: float, y: float, convention: str, size: tuple[int, int]) -> tuple[float, float]:
    sx, sy = _scale(convention, size)
    return x * sx, y * sy


def from_model(mx: float, my: float, convention: str, size: tuple[int, int]) -> tuple[float, float]:
    sx, sy = _scale(convention, size)
    return mx / sx, my / sy


REL1000_INTEGER_MAX_SIDE = 2000  # beyond this a whole rel1000 unit is more than 2 px


def decimals_for(convention: str, size: tuple[int, int] | None = None) -> int:
    """Decimals a model unit is written with, so that text round-trips within 1 px."""
    if convention == "rel1":
        return 4
    if convention == "rel1000" and size is not None and max(size) > REL1000_INTEGER_MAX_SIDE:
        return 1
    return 0


def round_for(value: float, convention: str, size: tuple[int, int] | None = None) -> int | float:
    """What a model sees for a coordinate on a screen of ``size`` (see ``decimals_for``;
    without a size, rel1000 is rounded to integers as before)."""
    decimals = decimals_for(convention, size)
    if convention == "rel1":
        return round(value, decimals)
    rounded = round(value, decimals)
    return int(rounded) if rounded == int(rounded) else rounded  # 500, not 500.0


def box_to_model(box: tuple[int, int, int, int], convention: str, size: tuple[int, int]) -> list:
    x1, y1 = to_model(box[0], box[1], convention, size)
    x2, y2 = to_model(box[2], box[3], convention, size)
    return [round_for(v, convention, size) for v in (x1, y1, x2, y2)]
