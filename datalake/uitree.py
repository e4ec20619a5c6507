"""Parse a uiautomator XML dump into a flat element list.

Real devices (``uiautomator dump``) and mockphone produce the same format:
``<hierarchy rotation="0"><node index="0" text="" resource-id="" class="..."
bounds="[0,0][1080,2400]" .../></hierarchy>``. The parser flattens the tree in
document order; ``UIElement.index`` is the position in that list (the element id
agents refer to), ``child_index`` is the node's own ``index`` attribute.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from datalake.errors import UITreeError
from datalake.types import Target

_BOUNDS = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")
_BOOL_ATTRS = (
    "checkable", "checked", "clickable", "enabled", "focusable", "focused",
    "scrollable", "long-clickable", "password", "selected",
)


@dataclass(frozen=True)
class UIElement:
    index: int
    child_index: int
    depth: int
    parent: int | None
    class_name: str
    resource_id: str
    text: str
    content_desc: str
    package: str
    bounds: tuple[int, int, int, int]
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

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    def contains(self, x: float, y: float) -> bool:
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def as_target(self) -> Target:
        return Target(
            index=self.index,
            resource_id=self.resource_id or None,
            text=self.text or None,
            content_desc=self.content_desc or None,
            class_name=self.class_name or None,
            bounds=self.bounds,
        )


def parse_bounds(value: str) -> tuple[int, int, int, int]:
    match = _BOUNDS.match(value.strip())
    if not match:
        raise UITreeError(f"bad bounds {value!r}: expected [x1,y1][x2,y2]")
    return tuple(int(v) for v in match.groups())  # type: ignore[return-value]


def parse_ui_tree(xml: str | bytes) -> list[UIElement]:
    """All ``node`` elements of a uiautomator dump, in document order."""
    head = xml[:4096] if isinstance(xml, str) else xml[:4096].decode("utf-8", "replace")
    if "<!DOCTYPE" in head or "<!ENTITY" in head:
        raise UITreeError("ui tree must not declare a DOCTYPE or entities")
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise UITreeError(f"ui tree is not well-formed XML: {exc}") from None
    if root.tag not in ("hierarchy", "node"):
        raise UITreeError(f"ui tree root must be <hierarchy>, got <{root.tag}>")
    elements: list[UIElement] = []
    _walk(root, depth=0, parent=None, out=elements)
    return elements


def _walk(node: ET.Element, depth: int, parent: int | None, out: list[UIElement]) -> None:
    for child in node:
        if child.tag != "node":
            continue
        me = len(out)
        out.append(_element(child, me, depth, parent))
        _walk(child, depth + 1, me, out)


def _element(node: ET.Element, index: int, depth: int, parent: int | None) -> UIElement:
    a = node.attrib
    try:
        child_index = int(a.get("index", "0"))
    except ValueError:
        raise UITreeError(f"node {index}: index {a.get('index')!r} is not an integer") from None
    flags = {name.replace("-", "_"): a.get(name, "true" if name == "enabled" else "false") == "true" for name in _BOOL_ATTRS}
    return UIElement(
        index=index,
        child_index=child_index,
        depth=depth,
        parent=parent,
        class_name=a.get("class", ""),
        resource_id=a.get("resource-id", ""),
        text=a.get("text", ""),
        content_desc=a.get("content-desc", ""),
        package=a.get("package", ""),
        bounds=parse_bounds(a.get("bounds", "[0,0][0,0]")),
        **flags,
    )


def element_at(elements: list[UIElement], x: float, y: float) -> UIElement | None:
    """The deepest (last in document order) element whose bounds contain the point."""
    hit = None
    for el in elements:
        if el.contains(x, y):
            hit = el
    return hit
