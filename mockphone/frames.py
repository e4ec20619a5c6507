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
``pixels()`` returns an ``(H, W, 3)`` uint8 array without encoding a PNG and without
copying: a read-only view of the frame's own memory (Pillow exports it through the
Arrow C interface; numpy's own ``asarray`` would copy 7.8 MB through ``tobytes``). A
view stays what it showed: before the cache changes a frame that a live view still
reads, it moves to another buffer (copy-on-write, one full-frame paste). The output is
byte-identical to painting the whole tree from scratch (``render.png``), which the tests
check on every screen the oracles visit.
"""

from __future__ import annotations

import dataclasses
import io
import sys
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from PIL import Image, ImageDraw

from mockphone import render
from mockphone.layout import Node

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

OVERLAYS = frozenset({"heads_up", "toast", "scrim"})
TILES = 48  # region tiles kept (a few screens' worth: content, bars, keyboards)
SELF_FILLED = frozenset({"app_root", "launcher", "statusbar", "navbar", "keyboard"})  # paint all their bounds
SEEN = 512  # keys of regions painted once, remembered to tile them the second time
SPARES = 3  # frame buffers kept for copy-on-write (more are allocated while callers hold more views)
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


class _Buffer:
    """A frame image and, once ``pixels()`` was asked for, the numpy array every view of it is based on."""

    __slots__ = ("img", "root")

    def __init__(self, img: Image.Image) -> None:
        self.img = img
        self.root: np.ndarray | None = None

    def viewed(self) -> bool:
        # numpy collapses view chains, so every view (and view of a view) of the frame holds ``root`` itself:
        # two references are ours (this slot and getrefcount's argument)
        return self.root is not None and sys.getrefcount(self.root) > 2

    def array(self) -> np.ndarray:
        if self.root is None:
            w, h = self.img.size
            values = pa.array(self.img).buffers()[-1]  # zero-copy: Pillow keeps RGB as 4 bytes a pixel
            if values is None or values.size < w * h * 4:  # not one block of memory: copy (never seen at 1080x2400)
                self.root = np.asarray(self.img.convert("RGBA")).reshape(-1)
            else:
                self.root = np.frombuffer(values, dtype=np.uint8, count=w * h * 4)
        w, h = self.img.size
        return self.root.reshape(h, w, 4)  # a view whose base is ``root`` (numpy bases never chain past it)


class FrameCache:
    """One phone's frame image, region tiles and last PNG; see the module docstring."""

    def __init__(self) -> None:
        self.frame: Image.Image | None = None
        self.buffer: _Buffer | None = None
        self.spares: list[_Buffer] = []
        self.theme: tuple | None = None
        self.regions: dict[tuple, tuple] = {}  # region bounds -> signature now painted there
        self.tiles: OrderedDict[tuple, Image.Image] = OrderedDict()
        self.seen: OrderedDict[tuple, None] = OrderedDict()  # keys painted once, no tile yet
        self.dirty = False  # overlays were painted over the regions
        self.key: tuple | None = None  # whole-screen key of the frame
        self.png_key: tuple | None = None
        self.png_bytes: bytes | None = None
        self.stats = {"painted": 0, "pasted": 0, "kept": 0, "png_reused": 0, "copied_on_write": 0}

    def image(self, phone: MockPhone, root: Node) -> Image.Image:
        """The screen as a Pillow image (owned by the cache: copy it before changing it)."""
        d = phone.display
        theme = (d.width, d.height, phone.system.dark)
        if self.frame is None or theme != self.theme:
            self.buffer = _Buffer(Image.new("RGB", (d.width, d.height), render.background(phone)))
            self.frame, self.spares = self.buffer.img, []
            self.theme, self.regions, self.dirty = theme, {}, False
            self.tiles.clear()
            self.seen.clear()
        painter = render.Painter(phone, self.frame)
        self._painter = painter
        base = [c for c in root.children if c.kind not in OVERLAYS]
        overlays = [c for c in root.children if c.kind in OVERLAYS]
        keys, kept = [], []
        self._tiled = sum((b[2] - b[0]) * (b[3] - b[1]) for b in (n.bounds for n in base)) == d.width * d.height
        for node in base:  # in paint order: once one region is redrawn, later ones are laid over it again
            key = (node.bounds, signature(node))
            keys.append(key)
            if len(kept) == len(keys) - 1 and not self.dirty and self.regions.get(node.bounds) == key:
                kept.append(node.bounds)
                self.stats["kept"] += 1
                continue
            if len(kept) == len(keys) - 1:  # the first region to change: only the ones before it are kept
                self._writable(kept)
            self._region(painter, node, key)
        over = tuple(signature(o) for o in overlays)
        self.key = (theme, tuple(keys), over)
        self.dirty = bool(overlays)
        if overlays and len(kept) == len(base):
            self._writable(kept)
        for node in overlays:
            render.paint(painter, node)
        return self.frame

    def _region(self, painter: render.Painter, node: Node, key: tuple) -> None:
        """Paste or paint one region (Pillow's boxes include the far edge, so a redrawn region may have spilled
        one pixel into the next: every region after it is laid again)."""
        bounds = node.bounds
        tile = self.tiles.get(key)
        if tile is not None:
            self.tiles.move_to_end(key)
            self.frame.paste(tile, bounds[:2])
            self.stats["pasted"] += 1
        else:
            if node.kind not in SELF_FILLED:
                self.frame.paste(render.background(painter.phone), bounds)
            render.paint(painter, node)
            self._remember(key, bounds)
            self.stats["painted"] += 1
        self.regions = {b: k for b, k in self.regions.items() if not _overlap(b, bounds)}
        self.regions[bounds] = key

    def _remember(self, key: tuple, bounds: tuple) -> None:
        """Keep a tile of a region painted for the second time (most screens are never seen again: cropping
        each one cost more than repainting the few that come back)."""
        if key not in self.seen:
            self.seen[key] = None
            if len(self.seen) > SEEN:
                self.seen.popitem(last=False)
            return
        x1, y1, x2, y2 = bounds  # with the one-pixel edge its fill spills over, as a full repaint has it
        self.tiles[key] = self.frame.crop((x1, y1, min(x2 + 1, self.frame.width), min(y2 + 1, self.frame.height)))
        if len(self.tiles) > TILES:
            self.tiles.popitem(last=False)

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
        """The screen as a read-only ``(H, W, 3)`` view of the frame; it keeps showing this screen, and shares no
        memory with an earlier view still alive (an unchanged screen is copied then, as gymnasium expects)."""
        self.image(phone, root)
        self._writable([b for b, _ in self.key[1]])
        return self.buffer.array()[:, :, :3]

    def _writable(self, kept: list[tuple]) -> None:
        """Before changing the frame: if a view still reads it, carry on in a buffer nobody views, copying only
        the ``kept`` regions (every other pixel is about to be laid again) when the regions tile the screen."""
        if not self.buffer.viewed():
            return
        free = next((b for b in self.spares if not b.viewed()), None)
        if free is None:
            free = _Buffer(Image.new("RGB", self.frame.size))
        else:
            self.spares.remove(free)
        if not self._tiled:
            free.img.paste(self.frame, (0, 0))
        for box in kept if self._tiled else ():
            free.img.paste(self.frame.crop(box), box[:2])
        self.spares = ([self.buffer] + self.spares)[:SPARES]
        self.buffer, self.frame = free, free.img
        self._painter.img, self._painter.draw = free.img, ImageDraw.Draw(free.img)
        self.stats["copied_on_write"] += 1


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
