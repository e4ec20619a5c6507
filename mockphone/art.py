"""Drawn pictures: launcher icons, contact avatars and product / hotel images.

Everything here is a pure function of its arguments (a name, an item id, a size),
drawn with Pillow's ``ImageDraw`` and cached, so the same phone shows the same bytes
on every run and the step loop pays for a picture once per process. Colours and
shapes come from a SHA-256 of the key, never from ``hash()`` (salted per process)
or a shared RNG.

* ``icon(glyph, size, color)``: an app's launcher icon, a white vector glyph (clock
  face, envelope, gear, cart, calendar page, ...) on its colour; unknown glyphs get
  the first letter;
* ``avatar(name, size)``: a circle in a colour of the name with its initials;
* ``picture(key, width, height)``: a two-colour gradient with a few soft shapes,
  as a stand-in for a product or hotel photo.

All return RGBA images owned by the cache (paste them, never draw on them).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Callable

from PIL import Image, ImageDraw

from mockphone import fonts

PALETTE = ("#1a73e8", "#d93025", "#188038", "#f9ab00", "#a142f4", "#e52592", "#12b5cb", "#e8710a", "#5f6368",
           "#0b8043", "#8430ce", "#c5221f")
SS = 4  # supersampling: glyphs are drawn 4x larger and scaled down, for smooth edges
Draw = ImageDraw.ImageDraw


def digest(key: str) -> bytes:
    """32 bytes that depend only on ``key`` (not on the process, the phone or the seed of anything else)."""
    return hashlib.sha256(key.encode("utf-8")).digest()


def _rgb(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)


@lru_cache(maxsize=256)
def icon(glyph: str, size: int, color: str) -> Image.Image:
    """A round launcher icon of ``size`` px: ``glyph`` (an app name) in white on ``color``."""
    big = size * SS
    img = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.ellipse((0, 0, big - 1, big - 1), fill=_rgb(color) + (255,))
    draw = GLYPHS.get(glyph)
    if draw is not None:
        draw(d, big, _rgb(color))
    img = img.resize((size, size), Image.LANCZOS)
    if draw is None:  # no glyph: the first letter, as launchers show for unknown icons
        ImageDraw.Draw(img).text((size / 2, size / 2), glyph[:1].upper(),
                                 font=fonts.font(int(size * 0.45), True, fonts.DEFAULT_FAMILY),
                                 fill="#ffffff", anchor="mm")
    return img


def _w(big: int, frac: float = 0.055) -> int:
    return max(int(big * frac), 1)


def _clock(d: Draw, s: int, bg: tuple) -> None:
    c, r = s / 2, s * 0.3
    d.ellipse((c - r, c - r, c + r, c + r), outline="white", width=_w(s))
    d.line((c, c, c, c - r * 0.7), fill="white", width=_w(s))
    d.line((c, c, c + r * 0.5, c + r * 0.2), fill="white", width=_w(s))


def _envelope(d: Draw, s: int, bg: tuple) -> None:
    x1, y1, x2, y2 = s * 0.24, s * 0.32, s * 0.76, s * 0.68
    d.rectangle((x1, y1, x2, y2), fill="white")
    d.line((x1, y1, s / 2, s * 0.52, x2, y1), fill=bg, width=_w(s, 0.045))


def _gear(d: Draw, s: int, bg: tuple) -> None:
    import math

    c, r_out, r_in = s / 2, s * 0.3, s * 0.22
    points = []
    for i in range(32):  # 8 teeth: two outer and two inner points each
        a = 2 * math.pi * i / 32
        r = r_out if (i % 4) in (0, 1) else r_in
        points.append((c + r * math.cos(a), c + r * math.sin(a)))
    d.polygon(points, fill="white")
    h = s * 0.09
    d.ellipse((c - h, c - h, c + h, c + h), fill=bg)


def _cart(d: Draw, s: int, bg: tuple) -> None:
    w = _w(s)
    d.line((s * 0.2, s * 0.3, s * 0.3, s * 0.3, s * 0.38, s * 0.6, s * 0.72, s * 0.6, s * 0.78, s * 0.38,
            s * 0.33, s * 0.38), fill="white", width=w, joint="curve")
    for x in (0.42, 0.68):
        r = s * 0.05
        d.ellipse((s * x - r, s * 0.7 - r, s * x + r, s * 0.7 + r), fill="white")


def _calendar(d: Draw, s: int, bg: tuple) -> None:
    x1, y1, x2, y2 = s * 0.26, s * 0.28, s * 0.74, s * 0.74
    d.rounded_rectangle((x1, y1, x2, y2), radius=s * 0.05, fill="white")
    d.rectangle((x1, y1 + s * 0.02, x2, y1 + s * 0.12), fill=bg)
    for i in range(3):
        for j in range(3):
            cx, cy = x1 + s * (0.1 + 0.14 * i), y1 + s * (0.2 + 0.09 * j)
            d.rectangle((cx - s * 0.025, cy - s * 0.025, cx + s * 0.025, cy + s * 0.025), fill=bg)
    for x in (0.36, 0.64):
        d.line((s * x, s * 0.22, s * x, s * 0.32), fill="white", width=_w(s, 0.04))


def _person(d: Draw, s: int, bg: tuple) -> None:
    c = s / 2
    d.ellipse((c - s * 0.11, s * 0.25, c + s * 0.11, s * 0.47), fill="white")
    d.pieslice((c - s * 0.22, s * 0.5, c + s * 0.22, s * 0.94), 180, 360, fill="white")


def _bubble(d: Draw, s: int, bg: tuple) -> None:
    d.rounded_rectangle((s * 0.24, s * 0.28, s * 0.76, s * 0.64), radius=s * 0.1, fill="white")
    d.polygon(((s * 0.34, s * 0.6), (s * 0.3, s * 0.76), (s * 0.48, s * 0.62)), fill="white")


def _two_bubbles(d: Draw, s: int, bg: tuple) -> None:
    d.ellipse((s * 0.2, s * 0.26, s * 0.6, s * 0.58), fill="white")
    d.ellipse((s * 0.44, s * 0.42, s * 0.8, s * 0.72), fill="white", outline=bg, width=_w(s, 0.03))
    for x in (0.32, 0.4):
        d.ellipse((s * x - s * 0.025, s * 0.4, s * x + s * 0.025, s * 0.45), fill=bg)


def _note(d: Draw, s: int, bg: tuple) -> None:
    d.rounded_rectangle((s * 0.28, s * 0.24, s * 0.72, s * 0.76), radius=s * 0.04, fill="white")
    for y in (0.38, 0.5, 0.62):
        d.line((s * 0.36, s * y, s * 0.64, s * y), fill=bg, width=_w(s, 0.035))


def _folder(d: Draw, s: int, bg: tuple) -> None:
    d.rounded_rectangle((s * 0.22, s * 0.3, s * 0.46, s * 0.42), radius=s * 0.03, fill="white")
    d.rounded_rectangle((s * 0.22, s * 0.36, s * 0.78, s * 0.7), radius=s * 0.04, fill="white")


def _bank(d: Draw, s: int, bg: tuple) -> None:
    d.polygon(((s * 0.5, s * 0.22), (s * 0.22, s * 0.38), (s * 0.78, s * 0.38)), fill="white")
    for x in (0.3, 0.43, 0.57, 0.7):
        d.rectangle((s * x - s * 0.03, s * 0.42, s * x + s * 0.03, s * 0.64), fill="white")
    d.rectangle((s * 0.22, s * 0.67, s * 0.78, s * 0.74), fill="white")


def _sparkle(d: Draw, s: int, bg: tuple) -> None:
    c = s / 2
    for r, k in ((s * 0.28, 0.07), (s * 0.12, 0.03)):
        cx, cy = (c, c) if k > 0.05 else (s * 0.7, s * 0.3)
        d.polygon(((cx, cy - r), (cx + r * k * 3, cy - r * k * 3), (cx + r, cy), (cx + r * k * 3, cy + r * k * 3),
                   (cx, cy + r), (cx - r * k * 3, cy + r * k * 3), (cx - r, cy), (cx - r * k * 3, cy - r * k * 3)),
                  fill="white")


def _clipboard(d: Draw, s: int, bg: tuple) -> None:
    d.rounded_rectangle((s * 0.28, s * 0.26, s * 0.72, s * 0.78), radius=s * 0.04, fill="white")
    d.rounded_rectangle((s * 0.4, s * 0.2, s * 0.6, s * 0.3), radius=s * 0.03, fill="white", outline=bg,
                        width=_w(s, 0.025))
    for y in (0.42, 0.54, 0.66):
        d.rectangle((s * 0.35, s * y - s * 0.02, s * 0.4, s * y + s * 0.02), fill=bg)
        d.line((s * 0.45, s * y, s * 0.65, s * y), fill=bg, width=_w(s, 0.03))


def _pin(d: Draw, s: int, bg: tuple) -> None:
    c, r = s / 2, s * 0.17
    d.ellipse((c - r, s * 0.22, c + r, s * 0.22 + 2 * r), fill="white")
    d.polygon(((c - r * 0.92, s * 0.22 + r * 1.35), (c + r * 0.92, s * 0.22 + r * 1.35), (c, s * 0.78)), fill="white")
    h = r * 0.42
    d.ellipse((c - h, s * 0.22 + r - h, c + h, s * 0.22 + r + h), fill=bg)


def _car(d: Draw, s: int, bg: tuple) -> None:
    d.polygon(((s * 0.32, s * 0.46), (s * 0.38, s * 0.32), (s * 0.62, s * 0.32), (s * 0.68, s * 0.46)), fill="white")
    d.rounded_rectangle((s * 0.22, s * 0.44, s * 0.78, s * 0.62), radius=s * 0.05, fill="white")
    d.rectangle((s * 0.41, s * 0.36, s * 0.59, s * 0.44), fill=bg)
    for x in (0.34, 0.66):
        r = s * 0.07
        d.ellipse((s * x - r, s * 0.62 - r, s * x + r, s * 0.62 + r), fill="white", outline=bg, width=_w(s, 0.03))


def _checklist(d: Draw, s: int, bg: tuple) -> None:
    for i, y in enumerate((0.32, 0.5, 0.68)):
        d.rounded_rectangle((s * 0.24, s * y - s * 0.05, s * 0.34, s * y + s * 0.05), radius=s * 0.02,
                            fill="white" if i < 2 else None, outline="white", width=_w(s, 0.025))
        d.line((s * 0.42, s * y, s * 0.76, s * y), fill="white", width=_w(s, 0.045))


def _sun_cloud(d: Draw, s: int, bg: tuple) -> None:
    r = s * 0.13
    d.ellipse((s * 0.3 - r, s * 0.36 - r, s * 0.3 + r, s * 0.36 + r), fill="#ffd54f")
    d.ellipse((s * 0.3, s * 0.42, s * 0.56, s * 0.66), fill="white")
    d.ellipse((s * 0.46, s * 0.36, s * 0.74, s * 0.64), fill="white")
    d.rounded_rectangle((s * 0.26, s * 0.54, s * 0.78, s * 0.68), radius=s * 0.07, fill="white")


def _music_note(d: Draw, s: int, bg: tuple) -> None:
    w = _w(s, 0.06)
    d.line((s * 0.44, s * 0.66, s * 0.44, s * 0.28, s * 0.68, s * 0.22, s * 0.68, s * 0.6), fill="white", width=w,
           joint="curve")
    for x, y in ((0.38, 0.66), (0.62, 0.6)):
        r = s * 0.08
        d.ellipse((s * x - r, s * y - r * 0.8, s * x + r, s * y + r * 0.8), fill="white")


def _newspaper(d: Draw, s: int, bg: tuple) -> None:
    d.rounded_rectangle((s * 0.24, s * 0.28, s * 0.76, s * 0.72), radius=s * 0.04, fill="white")
    d.rectangle((s * 0.3, s * 0.34, s * 0.48, s * 0.5), fill=bg)
    for y in (0.36, 0.44, 0.56, 0.64):
        x1 = 0.52 if y < 0.5 else 0.3
        d.line((s * x1, s * y, s * 0.7, s * y), fill=bg, width=_w(s, 0.03))


GLYPHS: dict[str, Callable[[Draw, int, tuple], None]] = {
    "clock": _clock, "mail": _envelope, "settings": _gear, "shop": _cart, "calendar": _calendar,
    "contacts": _person, "messages": _bubble, "superapp": _two_bubbles, "notes": _note, "files": _folder,
    "bank": _bank, "assistant": _sparkle, "forms": _clipboard, "maps": _pin, "rides": _car,
    "todo": _checklist, "weather": _sun_cloud, "music": _music_note, "news": _newspaper,
}


def initials(name: str) -> str:
    if "@" in name:  # an e-mail address: the words of its local part
        name = name.split("@", 1)[0].replace(".", " ").replace("_", " ")
    words = [w for w in name.replace("+", " ").split() if w[:1].isalnum()]
    if not words:
        return "#"
    if words[0][0].isdigit():  # a bare number: no initials, as the dialer shows
        return "#"
    return (words[0][0] + (words[-1][0] if len(words) > 1 else "")).upper()


@lru_cache(maxsize=512)
def avatar(name: str, size: int) -> Image.Image:
    """A round avatar of ``size`` px for a contact: initials on a colour of the name."""
    h = digest(f"avatar:{name}")
    big = size * SS
    img = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    ImageDraw.Draw(img).ellipse((0, 0, big - 1, big - 1), fill=_rgb(PALETTE[h[0] % len(PALETTE)]) + (255,))
    img = img.resize((size, size), Image.LANCZOS)
    ImageDraw.Draw(img).text((size / 2, size / 2), initials(name),
                             font=fonts.font(int(size * 0.4), True, fonts.DEFAULT_FAMILY),
                             fill="#ffffff", anchor="mm")
    return img


@lru_cache(maxsize=256)
def picture(key: str, width: int, height: int, radius: int = 0) -> Image.Image:
    """A product / hotel picture for item ``key``: a two-colour gradient and three soft shapes, corners rounded
    by ``radius`` px (transparent outside)."""
    h = digest(f"picture:{key}")
    a, b = _rgb(PALETTE[h[0] % len(PALETTE)]), _rgb(PALETTE[(h[0] + 1 + h[1] % (len(PALETTE) - 1)) % len(PALETTE)])
    grad = Image.linear_gradient("L").rotate(h[2] % 8 * 45, resample=Image.BILINEAR, fillcolor=128)
    grad = grad.crop((48, 48, 208, 208)).resize((width, height), Image.BILINEAR)  # the middle: no empty corners
    img = Image.composite(Image.new("RGB", (width, height), a), Image.new("RGB", (width, height), b), grad)
    overlay = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    d = ImageDraw.Draw(overlay)
    for i in range(3):
        cx, cy = h[3 + i * 3] / 255 * width, h[4 + i * 3] / 255 * height
        r = (0.15 + h[5 + i * 3] / 255 * 0.3) * min(width, height)
        box = (cx - r, cy - r, cx + r, cy + r)
        fill = (255, 255, 255, 70 + h[12 + i] % 60)
        if h[15 + i] % 3 == 0:
            d.ellipse(box, fill=fill)
        elif h[15 + i] % 3 == 1:
            d.rounded_rectangle(box, radius=r * 0.3, fill=fill)
        else:
            d.polygon(((cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)), fill=fill)
    img = img.convert("RGBA")
    img.alpha_composite(overlay)
    if radius:
        mask = Image.new("L", (width, height), 0)
        ImageDraw.Draw(mask).rounded_rectangle((0, 0, width - 1, height - 1), radius=radius, fill=255)
        img.putalpha(mask)
    return img
