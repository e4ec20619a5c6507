"""The widget vocabulary apps build their screens from.

An app's ``view(page)`` returns a :class:`View`: a title bar, a body of widgets laid
out top to bottom (scrolling when it is taller than the screen) and an optional
footer pinned above the navigation bar. Widgets are descriptions, rebuilt from app
state on every frame; callbacks are plain closures over the app. ``layout.py`` turns
a view into positioned nodes, which both the renderer and the XML dump read, so the
pixels and the bounds always agree.

Kinds: ``text``, ``button``, ``edit``, ``toggle``, ``checkbox``, ``item`` (a list
row with title and subtitle), ``image``, ``slider``, ``row`` (children side by side),
``chip``. Dialogs are a :class:`Dialog` shown by the phone above any screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Callback = Callable[[], None]


@dataclass(frozen=True)
class Widget:
    kind: str
    text: str = ""
    rid: str = ""  # resource-id without the package prefix, e.g. "search_box"
    desc: str = ""  # content-desc
    subtitle: str = ""
    trailing: str = ""
    hint: str = ""
    on_tap: Callback | None = None
    on_long_press: Callback | None = None
    on_change: Callable[[Any], None] | None = None  # toggle/checkbox get a bool, slider an int
    on_submit: Callback | None = None  # edit: the keyboard's enter key
    checked: bool = False
    value: int = 0  # slider value
    vmin: int = 0
    vmax: int = 100
    step: int = 1
    lines: int = 1  # edit: visible lines (multi-line fields wrap)
    password: bool = False
    enabled: bool = True
    selected: bool = False
    copyable: bool = True  # text: long-press copies it to the clipboard
    style: str = ""  # "title", "caption", "bubble_in", "bubble_out", "danger", "outline"
    color: str = ""  # image: fill colour
    height_dp: int = 0  # image/explicit height
    icon: str = ""  # item/image: "avatar:<name>" (a contact) or "picture:<item id>" (a product, a hotel); see art.py
    children: tuple[Widget, ...] = ()


def text(value: str, rid: str = "", style: str = "", copyable: bool = True, **kw: Any) -> Widget:
    return Widget("text", text=value, rid=rid, style=style, copyable=copyable, **kw)


def button(label: str, on_tap: Callback | None, rid: str = "", style: str = "", **kw: Any) -> Widget:
    return Widget("button", text=label, on_tap=on_tap, rid=rid, style=style, enabled=on_tap is not None, **kw)


def edit(rid: str, value: str, hint: str = "", lines: int = 1, on_submit: Callback | None = None, **kw: Any) -> Widget:
    """An input field. ``value`` comes from ``page.fields[rid]``; typing writes there."""
    return Widget("edit", text=value, rid=rid, hint=hint, lines=lines, on_submit=on_submit, **kw)


def toggle(label: str, checked: bool, on_change: Callable[[bool], None], rid: str = "", subtitle: str = "") -> Widget:
    return Widget("toggle", text=label, checked=checked, on_change=on_change, rid=rid, subtitle=subtitle)


def checkbox(label: str, checked: bool, on_change: Callable[[bool], None], rid: str = "") -> Widget:
    return Widget("checkbox", text=label, checked=checked, on_change=on_change, rid=rid)


def item(title: str, subtitle: str = "", on_tap: Callback | None = None, rid: str = "", trailing: str = "",
         on_long_press: Callback | None = None, desc: str = "", icon: str = "") -> Widget:
    """A list row; ``icon`` puts an avatar or a thumbnail at its start (``"avatar:Ann Lee"``, ``"picture:p12"``)."""
    return Widget("item", text=title, subtitle=subtitle, on_tap=on_tap, rid=rid, trailing=trailing,
                  on_long_press=on_long_press, desc=desc, icon=icon)


def image(desc: str, color: str = "#9aa0a6", height_dp: int = 120, rid: str = "", label: str = "",
          icon: str = "") -> Widget:
    """A picture: drawn from ``icon`` (``"avatar:<name>"`` or ``"picture:<item id>"``, default the desc) by art.py."""
    return Widget("image", desc=desc, color=color, height_dp=height_dp, rid=rid, text=label, icon=icon)


def slider(label: str, value: int, vmin: int, vmax: int, on_change: Callable[[int], None], rid: str = "",
           step: int = 1) -> Widget:
    return Widget("slider", desc=label, value=value, vmin=vmin, vmax=vmax, on_change=on_change, rid=rid, step=step)


def row(*children: Widget, rid: str = "") -> Widget:
    return Widget("row", children=tuple(children), rid=rid)


def chip(label: str, selected: bool, on_tap: Callback, rid: str = "") -> Widget:
    return Widget("chip", text=label, selected=selected, on_tap=on_tap, rid=rid)


@dataclass(frozen=True)
class View:
    """One screen of an app: title bar, scrolling body, pinned footer."""

    title: str
    body: tuple[Widget, ...] = ()
    footer: tuple[Widget, ...] = ()
    up: bool = False  # show the "Navigate up" arrow in the title bar
    actions: tuple[Widget, ...] = ()  # icon buttons at the right of the title bar
    loading: bool = False  # a spinner instead of the body (slow loads)


@dataclass
class Page:
    """An entry of an app's back stack, with the transient UI state of that screen."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # edit rid -> typed text
    scroll: int = 0  # body scroll offset in px

    def field(self, rid: str) -> str:
        return self.fields.get(rid, "")


@dataclass(frozen=True)
class Dialog:
    """A modal dialog: buttons are (label, callback); callbacks run after it closes."""

    title: str
    message: str = ""
    buttons: tuple[tuple[str, Callback | None], ...] = (("OK", None),)
    cancelable: bool = True
    package: str = ""
    rid: str = ""
