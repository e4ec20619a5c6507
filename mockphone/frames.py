"""Faster screens: repaint only the regions that changed, reuse PNG bytes of an unchanged screen, raw pixels.

A screen is a few opaque, disjoint regions (app content or launcher, status bar,
keyboard, navigation bar) and, on top, overlays (heads-up banner, toast, dialog and
its scrim). Each region is keyed by a signature of everything the renderer reads from
its node subtree (geometry, text, state, widget style, theme). ``FrameCache`` keeps
one frame image and a small LRU of region tiles:

* a region whose signature is the one already in the frame costs nothing;
* a region seen recently (back to a previous page, the same keyboard) is pasted;
* anything else is painted in place and remembered;
* overlays are painted afresh over the regions (they are translucent), and the regions
  under them are restored on the next frame.

``png()`` returns the previous bytes when the whole screen's signature did not change;
``pixels()`` returns an ``(H, W, 3)`` uint8 array without encoding a PNG. The output is
byte-identical to painting the whole tree from scratch (``render.png``), which the tests
check on every screen the oracles visit.
"""

from __future__ import annotations

import dataclasses
import io
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from mockphone import render
from mockphone.layout import Node

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

OVERLAYS = frozenset({"heads_up", "toast", "scrim"})
TILES = 48  # region tiles kept (a few screens' worth: content, bars, keyboards)
_FIELDS: dict[type, tuple[str, ...]] = {}


def signature(node: Node) -> tuple:
    """Everything the renderer reads from ``node`` and its subtree, as a hashable value."""
    w = node.widget
    widget = None
    if w is not None:
        names = _FIELDS.get(type(w))
        if names is None:
            names = _FIELDS[type(w)] = tuple(f.name for f in dataclasses.fields(w))
        widget = tuple(v for v in (getattr(w, name) for name in names) if not callable(v))
    data = tuple((k, _freeze(v)) for k, v in node.data.items())
    return (node.cls, node.bounds, node.package, node.kind, node.text, node.rid, node.desc, node.checked,
            node.enabled, node.focused, node.selected, node.password, widget, data,
            tuple(signature(child) for child in node.children))


def _freeze(value: Any) -> Any:
    if isinstance(value, Node):
        return signature(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if dataclasses.is_dataclass(value):
        return repr(value)
    return value


class FrameCache:
    """One phone's frame image, region tiles and last PNG; see the module docstring."""

    def __init__(self) -> None:
        self.frame: Image.Image | None = None
        self.theme: tuple | None = None
        self.regions: dict[tuple, tuple] = {}  # region bounds -> signature now painted there
        self.tiles: OrderedDict[tuple, Image.Image] = OrderedDict()
        self.dirty = False  # overlays were painted over the regions
        self.key: tuple | None = None  # whole-screen key of the frame
        self.png_key: tuple | None = None
        self.png_bytes: bytes | None = None
        self.stats = {"painted": 0, "pasted": 0, "kept": 0, "png_reused": 0}

    def image(self, phone: MockPhone, root: Node) -> Image.Image:
        """The screen as a Pillow image (owned by the cache: copy it before changing it)."""
        d = phone.display
        theme = (d.width, d.height, phone.system.dark)
        if self.frame is None or theme != self.theme:
            self.frame = Image.new("RGB", (d.width, d.height), render.background(phone))
            self.theme, self.regions, self.dirty = theme, {}, False
            self.tiles.clear()
        painter = render.Painter(phone, self.frame)
        base = [c for c in root.children if c.kind not in OVERLAYS]
        overlays = [c for c in root.children if c.kind in OVERLAYS]
        keys, touched = [], False
        for node in base:  # in paint order: once one region is redrawn, later ones are laid over it again
            key = (node.bounds, signature(node))
            keys.append(key)
            touched = self._region(painter, node, key, touched)
        over = tuple(signature(o) for o in overlays)
        self.key = (theme, tuple(keys), over)
        self.dirty = bool(overlays)
        for node in overlays:
            render.paint(painter, node)
        return self.frame

    def _region(self, painter: render.Painter, node: Node, key: tuple, touched: bool) -> bool:
        """Bring one region up to date; True if its pixels were (re)drawn (Pillow's boxes include the far edge,
        so a redrawn region may have spilled one pixel into the next)."""
        bounds = node.bounds
        if not self.dirty and not touched and self.regions.get(bounds) == key:
            self.stats["kept"] += 1
            return False
        tile = self.tiles.get(key)
        if tile is not None:
            self.tiles.move_to_end(key)
            self.frame.paste(tile, bounds[:2])
            self.stats["pasted"] += 1
        else:
            self.frame.paste(render.background(painter.phone), bounds)
            render.paint(painter, node)
            x1, y1, x2, y2 = bounds  # with the one-pixel edge its fill spills over, as a full repaint has it
            self.tiles[key] = self.frame.crop((x1, y1, min(x2 + 1, self.frame.width), min(y2 + 1, self.frame.height)))
            if len(self.tiles) > TILES:
                self.tiles.popitem(last=False)
            self.stats["painted"] += 1
        self.regions = {b: k for b, k in self.regions.items() if not _overlap(b, bounds)}
        self.regions[bounds] = key
        return True

    def png(self, phone: MockPhone, root: Node) -> bytes:
        image = self.image(phone, root)
        if self.key == self.png_key and self.png_bytes is not None:
            self.stats["png_reused"] += 1
            return self.png_bytes
        buf = io.BytesIO()
        image.save(buf, "PNG", compress_level=render.COMPRESS_LEVEL)
        self.png_key, self.png_bytes = self.key, buf.getvalue()
        return self.png_bytes

    def pixels(self, phone: MockPhone, root: Node) -> np.ndarray:
        return np.asarray(self.image(phone, root))  # a read-only copy of the frame


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
