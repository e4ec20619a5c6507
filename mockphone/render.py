"""Draw a node tree as a Material-like PNG screenshot with Pillow.

Every drawn element comes from a node whose bounds are also in the XML dump, so a
model that learns "tap the centre of the element" here taps the same pixels there.
"""

from __future__ import annotations

import io
import math
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from PIL import Image, ImageDraw, ImageFont

from mockphone import art, fonts, i18n
from mockphone.skin import STOCK
from mockphone.layout import Node, line_h, text_size
from mockphone.screen import KEY_ROWS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone

LIGHT = dict(STOCK.light)  # the stock palettes (a phone's skin picks its own: mockphone.skin)
DARK = dict(STOCK.dark)


class Painter:
    def __init__(self, phone: MockPhone, img: Image.Image) -> None:
        self.phone = phone
        self.d = phone.display
        self.img = img
        self.draw = ImageDraw.Draw(img)
        self.skin = phone.skin
        self.c = self.skin.dark if phone.system.dark else self.skin.light

    def accent(self, node: Node) -> str:
        app = self.phone.apps.get(node.package)
        return self.skin.accent(node.package, app.color) if app is not None else "#1a73e8"

    def on_bar(self, node: Node) -> str:
        """The colour of what an app bar shows: white on an accent bar, the accent on a surface bar."""
        return "#ffffff" if self.skin.appbar == "accent" else self.accent(node)

    def text(self, xy: tuple[float, float], value: str, size: int, fill: str, bold: bool = False,
             anchor: str = "lm") -> None:
        font = fonts.font_for(value, size, bold)
        if "\n" in value or not isinstance(font, ImageFont.FreeTypeFont):
            self.draw.text(xy, value, font=font, fill=fill, anchor=anchor)
            return
        # what ImageDraw.text does for one line, with the glyph mask (the costly part) cached
        x, y = xy
        mask, (dx, dy) = glyph_mask(font, value, anchor, math.modf(x)[0], math.modf(y)[0])
        self.draw.draw.draw_bitmap((int(x) + dx, int(y) + dy), mask, self.draw._getink(fill)[0])

    def text_in(self, node: Node, size: int, fill: str, bold: bool = False, align: str = "left") -> None:
        x1, y1, x2, y2 = node.bounds
        value = fonts.ellipsize(node.text, size, max(x2 - x1, 1), bold)
        if align == "center":
            self.text(((x1 + x2) / 2, (y1 + y2) / 2), value, size, fill, bold, "mm")
        elif align == "right":
            self.text((x2, (y1 + y2) / 2), value, size, fill, bold, "rm")
        else:
            self.text((x1, (y1 + y2) / 2), value, size, fill, bold)


@lru_cache(maxsize=4096)
def glyph_mask(font: ImageFont.FreeTypeFont, value: str, anchor: str, fx: float, fy: float) -> tuple:
    """Pillow's mask and offset for one line of text at a sub-pixel start, rendered once per distinct input
    (process-wide and thread-safe; keyed by the font object itself, never its id, which a freed font hands on)."""
    return font.getmask2(value, "L", anchor=anchor, start=(fx, fy))


COMPRESS_LEVEL = 1  # zlib level of screenshots: fast, and what every cached frame is encoded with


def background(phone: MockPhone) -> str:
    return phone.skin.dark["bg"] if phone.system.dark else phone.skin.light["bg"]


def png(phone: MockPhone, root: Node) -> bytes:
    """Paint the whole tree from scratch (``mockphone.frames`` does the same, repainting only what changed)."""
    img = Image.new("RGB", (phone.display.width, phone.display.height), background(phone))
    p = Painter(phone, img)
    _paint(p, root)
    buf = io.BytesIO()
    p.img.save(buf, "PNG", compress_level=COMPRESS_LEVEL)
    return buf.getvalue()


def paint(p: Painter, node: Node) -> None:
    """Draw ``node`` and its subtree onto ``p``'s image."""
    _paint(p, node)


def _paint(p: Painter, node: Node) -> None:
    full = node.data.get("full")
    clip = full is not None and full != node.bounds
    fn = _DRAW.get(node.kind)
    if fn is not None and not clip:
        fn(p, node)
    elif fn is not None:
        _paint_clipped(p, node, fn)
        return
    for child in node.children:
        _paint(p, child)


def _paint_clipped(p: Painter, node: Node, fn: Callable[[Painter, Node], None]) -> None:
    """Draw a partly scrolled-off node at its full size on a scratch image, then paste the visible part."""
    x1, y1, x2, y2 = node.data["full"]
    scratch = p.img.crop((x1, y1, x2, y2)) if y1 >= 0 else Image.new("RGB", (x2 - x1, y2 - y1), p.c["bg"])
    sub = Painter(p.phone, scratch)
    sub.img.paste(p.c["bg"], (0, 0, x2 - x1, y2 - y1))

    def shifted(n: Node) -> Node:
        a, b, c, e = n.data.get("full", n.bounds)
        copy = Node(n.cls, (a - x1, b - y1, c - x1, e - y1), n.package, n.kind, n.text, n.rid, n.desc,
                    checked=n.checked, enabled=n.enabled, focused=n.focused, selected=n.selected, widget=n.widget,
                    data={k: v for k, v in n.data.items() if k != "full"})
        copy.children = [shifted(ch) for ch in _all_children(n)]
        return copy

    _paint(sub, shifted(node))
    vx1, vy1, vx2, vy2 = node.bounds
    p.img.paste(scratch.crop((vx1 - x1, vy1 - y1, vx2 - x1, vy2 - y1)), (vx1, vy1))


def _all_children(n: Node) -> list[Node]:
    return n.data.get("all_children", n.children)


def _fill(color_key: str) -> Callable[[Painter, Node], None]:
    return lambda p, n: p.draw.rectangle(n.bounds, fill=p.c[color_key])


def _appbar(p: Painter, n: Node) -> None:
    if p.skin.appbar == "accent":
        p.draw.rectangle(n.bounds, fill=p.accent(n))
        return
    x1, y1, x2, y2 = n.bounds
    p.draw.rectangle(n.bounds, fill=p.c["bar"])
    p.draw.line((x1, y2 - 1, x2, y2 - 1), fill=p.c["line"], width=max(p.d.dp(1), 1))


def _apptitle(p: Painter, n: Node) -> None:
    p.text_in(n, p.d.dp(20), p.c["fg"] if p.skin.appbar == "surface" else "#ffffff", bold=True)


def _up(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    cx, cy, s = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(8)
    w, ink = max(p.d.dp(2), 2), p.on_bar(n)
    p.draw.line((cx - s, cy, cx + s, cy), fill=ink, width=w)
    p.draw.line((cx - s, cy, cx, cy - s), fill=ink, width=w)
    p.draw.line((cx - s, cy, cx, cy + s), fill=ink, width=w)


def _action(p: Painter, n: Node) -> None:
    if n.widget is not None and n.widget.style == "capsule":
        _capsule(p, n)
        return
    n2 = Node(n.cls, n.bounds, text=n.text or n.desc)
    p.text_in(n2, p.d.dp(14), p.on_bar(n), bold=True, align="center")


def _capsule(p: Painter, n: Node) -> None:
    """One half of a mini-program's capsule: "⋯" draws the pill (over both halves) and its dots, "✕" its cross."""
    x1, y1, x2, y2 = n.bounds
    top, bottom = y1 + p.d.dp(12), y2 - p.d.dp(12)
    cx, cy, s = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(6)
    if n.rid == "capsule_more":
        pill = (x1 + p.d.dp(4), top, x2 + (x2 - x1) - p.d.dp(8), bottom)
        p.draw.rounded_rectangle(pill, radius=(bottom - top) // 2, fill="#ffffff", outline="#dadce0",
                                 width=max(p.d.dp(1), 1))
        p.draw.line((x2, top + p.d.dp(7), x2, bottom - p.d.dp(7)), fill="#dadce0", width=max(p.d.dp(1), 1))
        r = max(p.d.dp(2), 2)
        for dx in (-s - r, 0, s + r):
            p.draw.ellipse((cx + dx - r, cy - r, cx + dx + r, cy + r), fill="#202124")
    else:
        cx -= p.d.dp(4)
        w = max(p.d.dp(2), 2)
        p.draw.line((cx - s, cy - s, cx + s, cy + s), fill="#202124", width=w)
        p.draw.line((cx - s, cy + s, cx + s, cy - s), fill="#202124", width=w)


def _text(p: Painter, n: Node) -> None:
    w = n.widget
    style = w.style if w is not None else ""
    size, bold = text_size(p.d, style)
    x1, y1, x2, y2 = n.bounds
    fill = "#d93025" if style == "danger" else (p.c["muted"] if style == "caption" else p.c["fg"])
    if style.startswith("bubble"):
        inner = int((x2 - x1) * 0.75) - p.d.dp(24)
        lines = fonts.wrap(n.text, size, max(inner, 10), bold)
        bw = max(fonts.text_width(line, size, bold) for line in lines) + p.d.dp(24)
        bx1 = x2 - p.d.dp(12) - bw if style == "bubble_out" else x1 + p.d.dp(12)
        color = p.accent(n) if style == "bubble_out" else p.c["bubble"]
        p.draw.rounded_rectangle((bx1, y1 + p.d.dp(4), bx1 + bw, y2 - p.d.dp(4)), radius=p.d.dp(16), fill=color)
        fill = "#ffffff" if style == "bubble_out" else p.c["fg"]
        x, y = bx1 + p.d.dp(12), y1 + p.d.dp(14)
    else:
        lines = fonts.wrap(n.text, size, max(x2 - x1 - p.d.dp(32), 10), bold)
        x, y = x1 + p.d.dp(16), y1 + p.d.dp(8)
    for line in lines:
        p.text((x, y), line, size, fill, bold, anchor="la")
        y += line_h(size)


def _button(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    box = (x1, y1 + p.d.dp(6), x2, y2 - p.d.dp(6))
    outline = n.widget is not None and n.widget.style == "outline"
    color = p.accent(n) if n.enabled else p.c["line"]
    if n.widget is not None and n.widget.style == "danger":
        color = "#d93025"
    if outline:
        p.draw.rounded_rectangle(box, radius=p.d.dp(20), outline=color, width=p.d.dp(1))
    else:
        p.draw.rounded_rectangle(box, radius=p.d.dp(20), fill=color)
    p.text_in(n, p.d.dp(15), color if outline else "#ffffff", bold=True, align="center")


def _edit(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    w = n.widget
    color = p.accent(n) if n.focused else p.c["muted"]
    p.draw.rounded_rectangle((x1, y1 + p.d.dp(4), x2, y2 - p.d.dp(4)), radius=p.d.dp(6), outline=color,
                             width=p.d.dp(2) if n.focused else p.d.dp(1))
    size = p.d.dp(16)
    shown = ("•" * len(w.text)) if w.password else w.text
    if w.lines <= 1:  # a single-line field shows pasted line breaks as spaces, as Android's does
        shown = " ".join(shown.splitlines())
    value, fill = (shown, p.c["fg"]) if shown else (w.hint, p.c["muted"])
    if w.lines <= 1:
        value = fonts.ellipsize(value, size, x2 - x1 - p.d.dp(32))
        p.text((x1 + p.d.dp(16), (y1 + y2) / 2), value, size, fill)
        end = x1 + p.d.dp(16) + fonts.text_width(shown, size)
        cursor_y = ((y1 + y2) / 2 - size * 0.6, (y1 + y2) / 2 + size * 0.6)
    else:
        y = y1 + p.d.dp(16)
        lines = fonts.wrap(value, size, x2 - x1 - p.d.dp(48))
        for line in lines:
            p.text((x1 + p.d.dp(16), y), line, size, fill, anchor="la")
            y += line_h(size)
        end = x1 + p.d.dp(16) + (fonts.text_width(lines[-1], size) if shown else 0)
        cursor_y = (y - line_h(size), y)
    if n.focused:
        p.draw.line((end + 2, cursor_y[0], end + 2, cursor_y[1]), fill=color, width=p.d.dp(2))


def _item(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    if n.selected:
        p.draw.rectangle(n.bounds, fill=p.c["surface"])
    p.draw.line((x1 + p.d.dp(16), y2 - 1, x2, y2 - 1), fill=p.c["line"], width=1)


def _switch(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    on = n.checked
    track = (x1, y1 + p.d.dp(6), x2, y2 - p.d.dp(6))
    p.draw.rounded_rectangle(track, radius=p.d.dp(10), fill=p.accent(n) if on else p.c["line"])
    r = p.d.dp(12)
    cx = x2 - r - p.d.dp(2) if on else x1 + r + p.d.dp(2)
    cy = (y1 + y2) // 2
    p.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="#ffffff", outline=p.c["muted"])


def _checkbox(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    s, cy = p.d.dp(20), (y1 + y2) // 2
    bx = x1 + p.d.dp(16)
    box = (bx, cy - s // 2, bx + s, cy + s // 2)
    if n.checked:
        p.draw.rounded_rectangle(box, radius=p.d.dp(3), fill=p.accent(n))
        p.draw.line((bx + s * 0.2, cy, bx + s * 0.45, cy + s * 0.25, bx + s * 0.8, cy - s * 0.25), fill="#ffffff",
                    width=p.d.dp(2))
    else:
        p.draw.rounded_rectangle(box, radius=p.d.dp(3), outline=p.c["muted"], width=p.d.dp(2))
    p.text((bx + s + p.d.dp(16), cy), fonts.ellipsize(n.text, p.d.dp(16), x2 - bx - s - p.d.dp(32)), p.d.dp(16),
           p.c["fg"])


def _chip(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    box = (x1, y1 + p.d.dp(6), x2, y2 - p.d.dp(6))
    if n.selected:
        p.draw.rounded_rectangle(box, radius=p.d.dp(8), fill=p.accent(n))
    else:
        p.draw.rounded_rectangle(box, radius=p.d.dp(8), outline=p.c["muted"], width=p.d.dp(1))
    p.text_in(n, p.d.dp(14), "#ffffff" if n.selected else p.c["fg"], align="center")


def _image(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    w = n.widget
    key = (w.icon if w else "") or f"picture:{n.desc}"
    kind, _, name = key.partition(":")
    if kind == "avatar":
        side = y2 - y1
        _paste(p, art.avatar(name, side), ((x1 + x2 - side) // 2, y1))
        return
    _paste(p, art.picture(name, x2 - x1, y2 - y1, p.d.dp(12)), (x1, y1))
    label = (w.text if w else "")
    if label:
        size = p.d.dp(14)
        value = fonts.ellipsize(label, size, x2 - x1 - p.d.dp(48), True)
        cw = fonts.text_width(value, size, True) + p.d.dp(20)
        chip = (x1 + p.d.dp(12), y2 - p.d.dp(40), x1 + p.d.dp(12) + cw, y2 - p.d.dp(12))
        p.draw.rounded_rectangle(chip, radius=p.d.dp(14), fill="#202124")
        p.text(((chip[0] + chip[2]) / 2, (chip[1] + chip[3]) / 2), value, size, "#ffffff", True, "mm")


def _item_icon(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    kind, _, name = n.data["icon"].partition(":")
    if kind == "avatar":
        _paste(p, art.avatar(name, x2 - x1), (x1, y1))
    else:
        _paste(p, art.picture(name, x2 - x1, y2 - y1, p.d.dp(8)), (x1, y1))


def _paste(p: Painter, picture: Image.Image, xy: tuple[int, int]) -> None:
    p.img.paste(picture, xy, picture)


def _slider(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    w = n.widget
    cy = (y1 + y2) // 2
    frac = (w.value - w.vmin) / max(w.vmax - w.vmin, 1)
    tx = x1 + frac * (x2 - x1 - 1)
    p.draw.line((x1, cy, x2, cy), fill=p.c["line"], width=p.d.dp(4))
    p.draw.line((x1, cy, tx, cy), fill=p.accent(n), width=p.d.dp(4))
    r = p.d.dp(10)
    p.draw.ellipse((tx - r, cy - r, tx + r, cy + r), fill=p.accent(n))


def _item_text(size_dp: int, muted: bool, bold: bool = False, align: str = "left"):
    def draw(p: Painter, n: Node) -> None:
        p.text_in(n, p.d.dp(size_dp), p.c["muted"] if muted else p.c["fg"], bold, align)
    return draw


def _spinner(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(20)
    p.draw.arc((cx - r, cy - r, cx + r, cy + r), 30, 300, fill=p.accent(n), width=p.d.dp(4))


def _statusbar(p: Painter, n: Node) -> None:
    p.draw.rectangle(n.bounds, fill=p.c["bar"])
    if p.skin.camera:  # a punch-hole camera in the middle of the bar
        x1, y1, x2, y2 = n.bounds
        cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(7)
        p.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="#000000")


def _sysicon(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    if n.desc.startswith("Battery"):
        p.draw.rectangle((x1, y1 + 4, x2, y2 - 2), fill=p.c["fg"])
    elif n.desc.startswith("Wifi"):
        p.draw.pieslice((x1 - 4, y1, x2 + 4, y2 + (y2 - y1)), 225, 315, fill=p.c["fg"])
    elif n.desc.startswith("Bluetooth"):
        p.text(((x1 + x2) / 2, (y1 + y2) / 2), "B", p.d.dp(12), p.c["fg"], True, "mm")
    else:
        p.text(((x1 + x2) / 2, (y1 + y2) / 2), "✈", p.d.dp(12), p.c["fg"], False, "mm")


def _dot(p: Painter, n: Node) -> None:
    p.draw.ellipse(n.bounds, fill=p.c["muted"])


def _navbar(p: Painter, n: Node) -> None:
    p.draw.rectangle(n.bounds, fill=p.c["bar"])


def _nav_handle(p: Painter, n: Node) -> None:
    """A gesture bar's handle: a short rounded pill."""
    x1, y1, x2, y2 = n.bounds
    cx, cy, half, h = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(54), max(p.d.dp(4), 3)
    p.draw.rounded_rectangle((cx - half, cy - h // 2, cx + half, cy + h // 2), radius=h // 2, fill=p.c["fg"])


def _nav_glyph(shape: str):
    def draw(p: Painter, n: Node) -> None:
        x1, y1, x2, y2 = n.bounds
        cx, cy, s = (x1 + x2) // 2, (y1 + y2) // 2, p.d.dp(8)
        if shape == "back":
            # a closed line, not polygon(width=...): Pillow draws a wide polygon outline through a full-screen mask
            tri = [(cx + s, cy - s), (cx + s, cy + s), (cx - s, cy), (cx + s, cy - s)]
            p.draw.line(tri, fill=p.c["fg"], width=p.d.dp(2), joint="curve")
        elif shape == "home":
            p.draw.ellipse((cx - s, cy - s, cx + s, cy + s), outline=p.c["fg"], width=p.d.dp(2))
        else:
            p.draw.rectangle((cx - s, cy - s, cx + s, cy + s), outline=p.c["fg"], width=p.d.dp(2))
    return draw


def _launcher(p: Painter, n: Node) -> None:
    p.draw.rectangle(n.bounds, fill=p.skin.launcher)


def _date(p: Painter, n: Node) -> None:
    p.text_in(n, p.d.dp(22), "#ffffff", bold=True)


def _app_icon(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    r, cx, cy = p.d.dp(28), (x1 + x2) // 2, y1 + p.d.dp(40)
    app = p.phone.apps.get(n.data["package"])
    _paste(p, art.icon(app.name if app is not None else n.text, 2 * r, n.data["color"]), (cx - r, cy - r))
    label = fonts.ellipsize(n.text, p.d.dp(13), x2 - x1 - p.d.dp(8))
    p.text((cx, cy + r + p.d.dp(14)), label, p.d.dp(13), "#ffffff", False, "mm")


def _keyboard(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    p.draw.rectangle(n.bounds, fill=p.c["kb"])
    row_h = (y2 - y1) / len(KEY_ROWS)
    labels = {"^": "⇧", "<": "⌫", "@": "?123", ">": "⏎", " ": i18n.t("space", p.phone.locale)}
    for r, keys in enumerate(KEY_ROWS):
        ky = y1 + r * row_h
        if r == 3:
            spans = ((0, 0.15), (0.15, 0.25), (0.25, 0.75), (0.75, 0.85), (0.85, 1.0))
        else:
            spans = tuple((i / len(keys), (i + 1) / len(keys)) for i in range(len(keys)))
        for key, (a, b) in zip(keys, spans):
            box = (x1 + a * (x2 - x1) + 6, ky + 8, x1 + b * (x2 - x1) - 6, ky + row_h - 8)
            p.draw.rounded_rectangle(box, radius=p.d.dp(6), fill=p.c["key"])
            p.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), labels.get(key, key), p.d.dp(18), p.c["fg"],
                   False, "mm")


def _toast(p: Painter, n: Node) -> None:
    p.draw.rounded_rectangle(n.bounds, radius=p.d.dp(24), fill="#323232")
    p.text_in(n, p.d.dp(14), "#ffffff", align="center")


def _scrim(p: Painter, n: Node) -> None:
    p.img.paste(Image.blend(p.img, Image.new("RGB", p.img.size, "#000000"), 0.45))
    p.draw = ImageDraw.Draw(p.img)


def _heads_up(p: Painter, n: Node) -> None:
    x1, y1, x2, y2 = n.bounds
    p.draw.rounded_rectangle((x1 + 2, y1 + 4, x2 + 2, y2 + 4), radius=p.d.dp(16), fill=p.c["line"])
    p.draw.rounded_rectangle(n.bounds, radius=p.d.dp(16), fill=p.c["card"], outline=p.c["line"])


def _dialog(p: Painter, n: Node) -> None:
    p.draw.rounded_rectangle(n.bounds, radius=p.d.dp(24), fill=p.c["card"])


def _lines(size_dp: int, muted: bool, bold: bool):
    def draw(p: Painter, n: Node) -> None:
        x1, y1, _, _ = n.bounds
        size = p.d.dp(size_dp)
        for i, line in enumerate(n.data.get("lines", (n.text,))):
            p.text((x1, y1 + i * line_h(size)), line, size, p.c["muted"] if muted else p.c["fg"], bold, anchor="la")
    return draw


def _dialog_button(p: Painter, n: Node) -> None:
    p.text_in(n, p.d.dp(14), p.accent(n), bold=True, align="center")


_DRAW: dict[str, Callable[[Painter, Node], None]] = {
    "app_root": _fill("bg"), "appbar": _appbar, "apptitle": _apptitle, "up": _up, "action": _action,
    "text": _text, "button": _button, "edit": _edit, "item": _item, "toggle": _item, "switch": _switch,
    "checkbox": _checkbox, "chip": _chip, "image": _image, "item_icon": _item_icon, "slider": _slider,
    "spinner": _spinner,
    "item_title": _item_text(16, False), "item_subtitle": _item_text(14, True),
    "item_trailing": _item_text(14, True, align="right"), "statusbar": _statusbar, "clock": _item_text(14, False, True),
    "sysicon": _sysicon, "notif_dot": _dot, "navbar": _navbar, "nav_back": _nav_glyph("back"),
    "nav_home": _nav_glyph("home"), "nav_recent_apps": _nav_glyph("recents"),
    "nav_handle": _nav_handle, "launcher": _launcher, "date": _date,
    "app_icon": _app_icon, "keyboard": _keyboard, "toast": _toast, "heads_up": _heads_up, "scrim": _scrim,
    "dialog": _dialog,
    "dialog_title": _lines(20, False, True), "dialog_message": _lines(16, True, False), "dialog_button": _dialog_button,
}
