"""Skins: how a mock phone looks, apart from what it shows.

A skin is a visual and structural domain shift over the same apps and tasks: the screen
(resolution and density), the system bars (status bar height, three-button navigation or a
gesture bar), layout offsets (app bar height, body inset), the colours of the system and of
the apps' chrome, and the Latin font family. ``stock`` is the look every other part of the
platform was built on; ``realish`` stands in for a real phone the policy has never seen
(1080x2340 at 400 dpi, a taller status bar with a camera cut-out, a gesture bar, condensed
type, warmer greys, tinted app bars). Tasks, verifiers and oracles read the UI tree, never
pixels or fixed coordinates, so they work unchanged on either skin.

``mockphone.reallike`` puts a realish phone behind the virtual adb server with real-like
perturbations and latencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from mockphone.layout import Display

PALETTE_KEYS = ("bg", "fg", "muted", "line", "surface", "bar", "card", "bubble", "kb", "key")


@dataclass(frozen=True)
class Skin:
    name: str
    display: Display
    light: Mapping[str, str]
    dark: Mapping[str, str]
    font: str = "sans"  # a key of mockphone.fonts.FAMILIES
    nav: str = "3button"  # "3button" (Back / Home / Overview buttons) or "gesture" (a handle, swipes)
    launcher: str = "#1f3a4d"  # the home screen's wallpaper colour
    appbar: str = "accent"  # "accent": app bars in the app's colour; "surface": a light bar with accent text
    camera: bool = False  # a punch-hole camera drawn in the status bar
    accents: Mapping[str, str] = field(default_factory=dict)  # package -> app colour, overriding the app's own

    def __post_init__(self) -> None:
        from mockphone.fonts import FAMILIES

        for name in ("light", "dark"):
            missing = set(PALETTE_KEYS) - set(getattr(self, name))
            if missing:
                raise ValueError(f"skin {self.name!r}: palette {name} lacks {sorted(missing)}")
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.font not in FAMILIES:
            raise ValueError(f"skin {self.name!r}: unknown font family {self.font!r}")
        if self.nav not in ("3button", "gesture"):
            raise ValueError(f"skin {self.name!r}: nav must be '3button' or 'gesture', not {self.nav!r}")
        if self.appbar not in ("accent", "surface"):
            raise ValueError(f"skin {self.name!r}: appbar must be 'accent' or 'surface', not {self.appbar!r}")

    def accent(self, package: str, default: str) -> str:
        return self.accents.get(package, default)


STOCK = Skin(
    name="stock", display=Display(),
    light={"bg": "#ffffff", "fg": "#202124", "muted": "#5f6368", "line": "#dadce0", "surface": "#f1f3f4",
           "bar": "#f8f9fa", "card": "#ffffff", "bubble": "#e8eaed", "kb": "#e8eaed", "key": "#ffffff"},
    dark={"bg": "#121212", "fg": "#e8eaed", "muted": "#9aa0a6", "line": "#3c4043", "surface": "#202124",
          "bar": "#000000", "card": "#2d2e30", "bubble": "#3c4043", "kb": "#202124", "key": "#3c4043"},
)

REALISH = Skin(
    name="realish",
    display=Display(width=1080, height=2340, dpi=400, status_dp=32, nav_dp=20, appbar_dp=64, gutter_dp=8),
    light={"bg": "#fbf8f3", "fg": "#1c1b1f", "muted": "#625b71", "line": "#cac4d0", "surface": "#ece6f0",
           "bar": "#fbf8f3", "card": "#f3edf7", "bubble": "#e7e0ec", "kb": "#d9d4dc", "key": "#fdfbff"},
    dark={"bg": "#1c1b1f", "fg": "#e6e1e5", "muted": "#cac4d0", "line": "#49454f", "surface": "#2b2930",
          "bar": "#1c1b1f", "card": "#2b2930", "bubble": "#49454f", "kb": "#2b2930", "key": "#49454f"},
    font="condensed", nav="gesture", launcher="#3d2f4f", appbar="surface", camera=True,
    accents={"com.android.settings": "#00668b", "com.google.android.apps.messaging": "#006a60",
             "com.phoneloop.mail": "#b3261e", "com.android.contacts": "#6750a4"},
)

SKINS = {s.name: s for s in (STOCK, REALISH)}


def get(spec: str | Skin | None) -> Skin:
    """A skin by name (``stock``, ``realish``), a :class:`Skin` as it is, or ``stock`` for None."""
    if spec is None:
        return STOCK
    if isinstance(spec, Skin):
        return spec
    if spec not in SKINS:
        raise ValueError(f"unknown skin {spec!r} (known: {', '.join(sorted(SKINS))})")
    return SKINS[spec]
