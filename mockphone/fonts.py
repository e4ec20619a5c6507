"""TrueType fonts for rendering and for measuring text during layout.

DejaVu Sans is used where the system has it; otherwise Pillow's bundled default
font (a real TrueType font since Pillow 10.1) at the requested size. Layout and
rendering use the same font objects, so wrapped lines match what is drawn.
"""

from __future__ import annotations

import os
from functools import lru_cache

from PIL import ImageFont

_DEJAVU = "/usr/share/fonts/truetype/dejavu/"


@lru_cache(maxsize=64)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    path = os.path.join(_DEJAVU, name)
    if os.path.exists(path):
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=4096)
def text_width(value: str, size: int, bold: bool = False) -> int:
    return int(font(size, bold).getlength(value))


@lru_cache(maxsize=2048)
def wrap(value: str, size: int, width: int, bold: bool = False) -> tuple[str, ...]:
    """Greedy word wrap to ``width`` px; explicit newlines are kept; long words are cut."""
    lines: list[str] = []
    for paragraph in value.split("\n"):
        current = ""
        for word in paragraph.split(" "):
            candidate = word if not current else current + " " + word
            if text_width(candidate, size, bold) <= width:
                current = candidate
                continue
            if current:
                lines.append(current)
            current = word
            while text_width(current, size, bold) > width and len(current) > 1:
                cut = len(current) - 1
                while cut > 1 and text_width(current[:cut], size, bold) > width:
                    cut -= 1
                lines.append(current[:cut])
                current = current[cut:]
        lines.append(current)
    return tuple(lines)


def ellipsize(value: str, size: int, width: int, bold: bool = False) -> str:
    """One line, cut with an ellipsis if it is wider than ``width`` px."""
    first = value.split("\n")[0]
    if text_width(first, size, bold) <= width and "\n" not in value:
        return value
    while first and text_width(first + "…", size, bold) > width:
        first = first[:-1]
    return first + "…"
