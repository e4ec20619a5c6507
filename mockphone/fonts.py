"""TrueType fonts for rendering and for measuring text during layout.

DejaVu Sans is used where the system has it; otherwise Pillow's bundled default
font (a real TrueType font since Pillow 10.1) at the requested size. Text with CJK
characters (a zh-CN phone) falls back to Noto Sans CJK (Debian ``fonts-noto-cjk``,
which also has Latin glyphs, so a mixed string is drawn with one font) and, without
it, to any other CJK font fontconfig would pick. Layout and rendering use the same
font objects (:func:`font_for`), so wrapped lines match what is drawn.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from functools import lru_cache
from typing import Iterator

from PIL import ImageFont

from mockphone.i18n import has_cjk, is_cjk

_DEJAVU = "/usr/share/fonts/truetype/dejavu/"
# (path, face index in the collection): face 2 of the Noto CJK .ttc files is Simplified Chinese (SC)
_CJK = (("/usr/share/fonts/opentype/noto/NotoSansCJK-{w}.ttc", 2),
        ("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc", 0),
        ("/usr/share/fonts/truetype/arphic/uming.ttc", 0))


# Latin font families a skin can pick (mockphone.skin): file stem of the regular and the bold face
FAMILIES = {"sans": ("DejaVuSans", "DejaVuSans-Bold"),
            "condensed": ("DejaVuSansCondensed", "DejaVuSansCondensed-Bold")}
DEFAULT_FAMILY = "sans"
_FAMILY: contextvars.ContextVar[str] = contextvars.ContextVar("mockphone_font_family", default=DEFAULT_FAMILY)


@contextlib.contextmanager
def family(name: str) -> Iterator[None]:
    """Lay out and draw with font family ``name`` inside the block (a phone's skin sets it around compose and
    paint; every cache below is keyed by the family, so phones of two skins in one process never mix)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown font family {name!r} (known: {', '.join(sorted(FAMILIES))})")
    token = _FAMILY.set(name)
    try:
        yield
    finally:
        _FAMILY.reset(token)


def font(size: int, bold: bool = False, family_name: str | None = None) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The Latin font at ``size`` px of ``family_name`` (default: the current family, see :func:`family`)."""
    return _font(size, bold, family_name or _FAMILY.get())


@lru_cache(maxsize=128)
def _font(size: int, bold: bool, family_name: str) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    name = FAMILIES[family_name][1 if bold else 0] + ".ttf"
    path = os.path.join(_DEJAVU, name)
    if os.path.exists(path):
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=64)
def cjk_font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A font with CJK glyphs (the first installed of :data:`_CJK`), else :func:`font` (which draws tofu)."""
    for pattern, index in _CJK:
        path = pattern.format(w="Bold" if bold else "Regular")
        if os.path.exists(path):
            return ImageFont.truetype(path, size, index=index)
    return font(size, bold)


def font_for(value: str, size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The font that draws ``value``: the CJK fallback when it has CJK characters, else the Latin font."""
    return cjk_font(size, bold) if has_cjk(value) else font(size, bold)


def text_width(value: str, size: int, bold: bool = False) -> int:
    """Width in px of ``value`` on one line; of its widest line when it has line breaks (Pillow's
    ``getlength`` with libraqm raises on them)."""
    return _text_width(value, size, bold, _FAMILY.get())


@lru_cache(maxsize=4096)
def _text_width(value: str, size: int, bold: bool, family_name: str) -> int:
    lines = value.splitlines()
    if len(lines) > 1 or (lines and lines[0] != value):
        return max(_text_width(line, size, bold, family_name) for line in lines)
    return int(font_for(value, size, bold).getlength(value))


_CLOSERS = "，。、；：！？）》」』”’…"  # never start a line
_OPENERS = "“‘（《「『"  # never end one


def _tokens(paragraph: str) -> list[str]:
    """Break opportunities: words with their trailing spaces, and each CJK character on its own.

    A CJK character may start or end a line anywhere (no spaces between ideographs);
    Latin words and numbers stay whole. Closing punctuation sticks to what precedes it.
    """
    out: list[str] = []
    for ch in paragraph:
        glue = out and (ch == " " or ch in _CLOSERS or out[-1][-1] in _OPENERS or
                        not is_cjk(ch) and not is_cjk(out[-1][-1]) and not out[-1].endswith(" "))
        if glue:
            out[-1] += ch
        else:
            out.append(ch)
    if len(out) > 1 and not out[0].strip():  # a paragraph's leading spaces stay with its first word
        lead = out.pop(0)
        out[0] = lead + out[0]
    return out


def wrap(value: str, size: int, width: int, bold: bool = False) -> tuple[str, ...]:
    """Greedy wrap to ``width`` px: between words and between any two CJK characters; explicit
    newlines are kept; a word wider than the line is cut (nothing else is)."""
    return _wrap(value, size, width, bold, _FAMILY.get())


@lru_cache(maxsize=2048)
def _wrap(value: str, size: int, width: int, bold: bool, family_name: str) -> tuple[str, ...]:
    lines: list[str] = []
    for paragraph in one_newline(value).split("\n"):
        if text_width(paragraph, size, bold) <= width:  # most labels: one line, no token-by-token measuring
            lines.append(paragraph.rstrip(" "))
            continue
        tokens, i = _tokens(paragraph), 0
        while i < len(tokens):
            k = _fit(tokens, i, size, width, bold)
            if k:
                lines.append("".join(tokens[i:i + k]).rstrip(" "))
                i += k
                continue
            word = tokens[i].rstrip(" ")  # one word wider than the line: cut it, the rest goes on
            cut = len(word) - 1
            while cut > 1 and text_width(word[:cut], size, bold) > width:
                cut -= 1
            lines.append(word[:cut])
            tokens[i] = tokens[i][cut:]
    return tuple(lines)


def _fit(tokens: list[str], i: int, size: int, width: int, bold: bool) -> int:
    """How many tokens from ``i`` fill one line (binary search: a line of ideographs is many tokens);
    0 when even the first is too wide, unless it is a single character (drawn as it is)."""
    lo, hi = 0, len(tokens) - i
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if text_width("".join(tokens[i:i + mid]).rstrip(" "), size, bold) <= width:
            lo = mid
        else:
            hi = mid - 1
    return lo or (1 if len(tokens[i].rstrip(" ")) <= 1 else 0)


_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines splits on


def one_newline(value: str) -> str:
    """Every line break ``str.splitlines`` knows as ``\\n`` (Pillow's layout engine raises on the others)."""
    if not any(c in value for c in _BREAKS[1:]):
        return value
    return "\n".join(value.splitlines()) + ("\n" if value[-1] in _BREAKS else "")


def ellipsize(value: str, size: int, width: int, bold: bool = False) -> str:
    """One line, cut with an ellipsis if it is wider than ``width`` px."""
    value = one_newline(value)
    first = value.split("\n")[0]
    if text_width(first, size, bold) <= width and "\n" not in value:
        return value
    while first and text_width(first + "…", size, bold) > width:
        first = first[:-1]
    return first + "…"
