"""Layout: widgets -> positioned :class:`Node` trees (the one tree render and XML read).

Sizes are in dp/sp and scale with the display density (dpi / 160), so a 720x1600
phone at 320 dpi lays out like a smaller real phone rather than a cropped big one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockphone import fonts
from mockphone.widgets import View, Widget

Bounds = tuple[int, int, int, int]

CLASS_OF = {
    "text": "android.widget.TextView", "button": "android.widget.Button", "edit": "android.widget.EditText",
    "toggle": "android.widget.LinearLayout", "checkbox": "android.widget.CheckBox",
    "item": "android.widget.LinearLayout", "image": "android.widget.ImageView",
    "slider": "android.widget.SeekBar", "row": "android.widget.LinearLayout", "chip": "android.widget.CompoundButton",
}
TEXT_STYLES = {"": (16, False), "title": (22, True), "headline": (28, True), "caption": (14, False),
               "bubble_in": (16, False), "bubble_out": (16, False), "danger": (16, True)}


@dataclass(frozen=True)
class Display:
    width: int = 1080
    height: int = 2400
    dpi: int = 420
    # system-bar and layout metrics in dp (a skin changes them: mockphone.skin)
    status_dp: int = 24
    nav_dp: int = 48  # 48: three-button navigation; a gesture bar is thinner
    appbar_dp: int = 56
    gutter_dp: int = 0  # extra horizontal inset of an app's body (a layout offset)

    def __post_init__(self) -> None:
        for name in ("status_dp", "nav_dp", "appbar_dp", "gutter_dp"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 120:
                raise ValueError(f"Display.{name} must be an integer 0..120 dp, got {value!r}")
        for name in ("width", "height", "dpi"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Display.{name} must be a positive integer, got {value!r}")
        if self.width < 320 or self.height < 480:
            raise ValueError(f"Display {self.width}x{self.height} is too small for a phone UI (min 320x480)")

    @property
    def density(self) -> float:
        return self.dpi / 160

    def dp(self, value: float) -> int:
        return int(round(value * self.density))

    @property
    def status_h(self) -> int:
        return self.dp(self.status_dp)

    @property
    def nav_h(self) -> int:
        return self.dp(self.nav_dp)

    @property
    def keyboard_h(self) -> int:
        return self.dp(260)


@dataclass(eq=False)
class Node:
    """A positioned element: everything the renderer, the XML dump and hit-testing need."""

    cls: str
    bounds: Bounds
    package: str = ""
    kind: str = ""  # what to draw (widget kind or a system part like "statusbar")
    text: str = ""
    rid: str = ""
    desc: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    widget: Widget | None = None
    data: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def full_rid(self) -> str:
        if not self.rid or ":" in self.rid:
            return self.rid
        return f"{self.package}:id/{self.rid}"


def text_size(d: Display, style: str) -> tuple[int, bool]:
    sp, bold = TEXT_STYLES.get(style, TEXT_STYLES[""])
    return d.dp(sp), bold


def line_h(size: int) -> int:
    return int(size * 1.35)


def measure(d: Display, w: Widget, width: int) -> int:
    """Height in px of widget ``w`` laid out ``width`` px wide."""
    k = w.kind
    if k == "text":
        size, bold = text_size(d, w.style)
        inner = int(width * 0.75) - d.dp(24) if w.style.startswith("bubble") else width - d.dp(32)
        pad = d.dp(28) if w.style.startswith("bubble") else d.dp(16)
        return len(fonts.wrap(w.text, size, max(inner, 10), bold)) * line_h(size) + pad
    if k == "edit":
        if w.lines <= 1:
            return d.dp(64)
        size = d.dp(16)
        shown = len(fonts.wrap(w.text or w.hint, size, width - d.dp(48)))
        return max(w.lines, shown) * line_h(size) + d.dp(32)
    if k == "row":
        cw = _child_width(d, width, len(w.children))
        return max((measure(d, c, cw) for c in w.children), default=0)
    fixed = {"button": 64, "toggle": 72 if w.subtitle else 64, "checkbox": 56, "chip": 52, "slider": 88,
             "item": 76 if w.subtitle else 60}
    if k == "image":
        return d.dp(w.height_dp)
    return d.dp(fixed[k])


def _child_width(d: Display, width: int, n: int) -> int:
    return (width - d.dp(8) * (n - 1)) // max(n, 1) if n else width


def place(d: Display, w: Widget, x: int, y: int, width: int, pkg: str, focus: str | None) -> Node:
    """The node of widget ``w`` with its top-left at (x, y)."""
    h = measure(d, w, width)
    b = (x, y, x + width, y + h)
    node = Node(CLASS_OF[w.kind], b, package=pkg, kind=w.kind, text=w.text, rid=w.rid, desc=w.desc,
                enabled=w.enabled, selected=w.selected, widget=w)
    k = w.kind
    if k == "text":
        node.long_clickable = w.copyable or w.on_long_press is not None
        node.clickable = w.on_tap is not None
    elif k in ("button", "chip", "item"):
        node.clickable = w.on_tap is not None
        node.focusable = node.clickable
        node.long_clickable = w.on_long_press is not None
        if k == "chip":
            node.checkable, node.checked = True, w.selected
        if k == "item":
            node.text = ""
            node.children = _item_children(d, w, b, pkg)
    elif k == "edit":
        node.clickable = node.focusable = node.long_clickable = True
        node.focused = focus == w.rid
        node.password = w.password
        node.text = ("•" * len(w.text)) if w.password else (w.text or w.hint)
    elif k in ("toggle", "checkbox"):
        node.clickable = node.focusable = True
        if k == "checkbox":
            node.checkable, node.checked = True, w.checked
        else:
            node.text = ""
            node.children = _toggle_children(d, w, b, pkg)
    elif k == "slider":
        node.cls, node.kind, node.widget = "android.widget.LinearLayout", "slider_box", None
        label = Node("android.widget.TextView", (x + d.dp(16), y, x + width - d.dp(16), y + d.dp(40)), pkg,
                     "item_title", text=f"{w.desc}: {w.value}", rid=f"{w.rid}_label" if w.rid else "")
        bar = Node("android.widget.SeekBar", (x + d.dp(16), y + d.dp(40), x + width - d.dp(16), y + h - d.dp(8)),
                   pkg, "slider", text=str(w.value), rid=w.rid, desc=w.desc, clickable=True, focusable=True,
                   widget=w)
        node.rid, node.desc = "", ""
        node.children = [label, bar]
    elif k == "row":
        cw = _child_width(d, width, len(w.children))
        node.children = [place(d, c, x + i * (cw + d.dp(8)), y, cw, pkg, focus) for i, c in enumerate(w.children)]
    return node


ICON_DP = {"avatar": 40, "picture": 56}  # list-row avatars and thumbnails, as Material lists size them


def _item_children(d: Display, w: Widget, b: Bounds, pkg: str) -> list[Node]:
    x1, y1, x2, y2 = b
    pad = d.dp(16)
    trail_w = fonts.text_width(w.trailing, d.dp(14)) + pad if w.trailing else 0
    out, icon = [], []
    if w.icon:  # listed after the texts, so a row's first child stays its title (as callers expect)
        side, cy = d.dp(ICON_DP.get(w.icon.split(":", 1)[0], 40)), (y1 + y2) // 2
        icon.append(Node("android.widget.ImageView", (x1 + pad, cy - side // 2, x1 + pad + side, cy + side // 2), pkg,
                         "item_icon", rid="android:id/icon", data={"icon": w.icon}))
        x1 += side + pad
    if w.subtitle:
        mid = y1 + d.dp(40)
        out.append(Node("android.widget.TextView", (x1 + pad, y1 + d.dp(10), x2 - pad - trail_w, mid), pkg,
                        "item_title", text=w.text, rid="android:id/title"))
        out.append(Node("android.widget.TextView", (x1 + pad, mid, x2 - pad - trail_w, y2 - d.dp(8)), pkg,
                        "item_subtitle", text=w.subtitle, rid="android:id/summary"))
    else:
        out.append(Node("android.widget.TextView", (x1 + pad, y1, x2 - pad - trail_w, y2), pkg, "item_title",
                        text=w.text, rid="android:id/title"))
    if w.trailing:
        out.append(Node("android.widget.TextView", (x2 - trail_w, y1, x2 - pad, y2), pkg, "item_trailing",
                        text=w.trailing, rid="android:id/text2"))
    return out + icon


def _toggle_children(d: Display, w: Widget, b: Bounds, pkg: str) -> list[Node]:
    x1, y1, x2, y2 = b
    pad, sw = d.dp(16), d.dp(52)
    label = Node("android.widget.TextView", (x1 + pad, y1, x2 - sw - 2 * pad, y2), pkg, "item_title",
                 text=w.text, rid="android:id/title")
    if w.subtitle:
        label.bounds = (x1 + pad, y1 + d.dp(8), x2 - sw - 2 * pad, y1 + d.dp(40))
    cy = (y1 + y2) // 2
    switch = Node("android.widget.Switch", (x2 - pad - sw, cy - d.dp(16), x2 - pad, cy + d.dp(16)), pkg, "switch",
                  text="ON" if w.checked else "OFF", rid="android:id/switch_widget", checkable=True, checked=w.checked,
                  focusable=True)
    out = [label, switch]
    if w.subtitle:
        out.insert(1, Node("android.widget.TextView", (x1 + pad, y1 + d.dp(40), x2 - sw - 2 * pad, y2 - d.dp(6)),
                           pkg, "item_subtitle", text=w.subtitle, rid="android:id/summary"))
    return out


def layout_view(d: Display, view: View, pkg: str, area: Bounds, scroll: int, focus: str | None) -> Node:
    """Lay out a whole app view inside ``area``; returns the app's root node."""
    x1, y1, x2, y2 = area
    root = Node("android.widget.FrameLayout", area, pkg, "app_root", rid="content")
    bar = _app_bar(d, view, pkg, (x1, y1, x2, y1 + d.dp(d.appbar_dp)))
    root.children.append(bar)
    foot_top = y2
    footer_nodes = []
    for w in reversed(view.footer):
        h = measure(d, w, x2 - x1 - d.dp(32))
        foot_top -= h + d.dp(4)
        footer_nodes.insert(0, place(d, w, x1 + d.dp(16), foot_top, x2 - x1 - d.dp(32), pkg, focus))
    body_box = (x1, bar.bounds[3], x2, foot_top)
    if view.loading:
        root.children.append(Node("android.widget.ProgressBar", body_box, pkg, "spinner", rid="progress",
                                  desc="Loading"))
    else:
        root.children.append(_body(d, view.body, pkg, body_box, scroll, focus))
    root.children.extend(footer_nodes)
    return root


def _body(d: Display, widgets: tuple[Widget, ...], pkg: str, box: Bounds, scroll: int, focus: str | None) -> Node:
    x1, y1, x2, y2 = box
    x1, x2 = x1 + d.dp(d.gutter_dp), x2 - d.dp(d.gutter_dp)
    margin = {"button": 16, "edit": 16, "row": 16, "slider": 0, "image": 16}
    placed: list[Node] = []
    y = y1 + d.dp(8)
    for w in widgets:
        m = d.dp(margin.get(w.kind, 0))
        node = place(d, w, x1 + m, y, x2 - x1 - 2 * m, pkg, focus)
        placed.append(node)
        y = node.bounds[3] + d.dp(4)
    total = y - y1
    max_scroll = max(0, total - (y2 - y1))
    scroll = min(max(scroll, 0), max_scroll)
    body = Node("androidx.recyclerview.widget.RecyclerView", box, pkg, "body", rid="list",
                scrollable=max_scroll > 0, focusable=max_scroll > 0)
    body.data.update(max_scroll=max_scroll, scroll=scroll)
    for node in placed:
        _shift(node, -scroll)
        clipped = _clip(node, box)
        if clipped is not None:
            body.children.append(clipped)
    return body


def _shift(node: Node, dy: int) -> None:
    for n in node.walk():
        a, b, c, e = n.bounds
        n.bounds = (a, b + dy, c, e + dy)


def _clip(node: Node, box: Bounds) -> Node | None:
    """Drop nodes outside the viewport, clip the bounds of partly visible ones (as RecyclerView does)."""
    x1, y1, x2, y2 = box
    a, b, c, e = node.bounds
    if e <= y1 or b >= y2:
        return None
    node.data.setdefault("full", node.bounds)
    node.data.setdefault("all_children", list(node.children))
    node.bounds = (max(a, x1), max(b, y1), min(c, x2), min(e, y2))
    node.children = [k for k in (_clip(ch, box) for ch in node.children) if k is not None]
    return node


def _app_bar(d: Display, view: View, pkg: str, box: Bounds) -> Node:
    x1, y1, x2, y2 = box
    bar = Node("android.view.ViewGroup", box, pkg, "appbar", rid="toolbar")
    left = x1 + d.dp(16)
    if view.up:
        bar.children.append(Node("android.widget.ImageButton", (x1, y1, x1 + d.dp(56), y2), pkg, "up",
                                 desc="Navigate up", clickable=True, focusable=True))
        left = x1 + d.dp(72)
    right = x2
    actions = []
    for w in reversed(view.actions):
        aw = max(d.dp(56), fonts.text_width(w.text or w.desc, d.dp(14), True) + d.dp(24))
        right -= aw
        actions.insert(0, Node("android.widget.Button", (right, y1, right + aw, y2), pkg, "action", text=w.text,
                               desc=w.desc, rid=w.rid, clickable=True, focusable=True, widget=w))
    bar.children.append(Node("android.widget.TextView", (left, y1, right, y2), pkg, "apptitle", text=view.title,
                             rid="action_bar_title"))
    bar.children.extend(actions)
    return bar
