"""Recorded gestures into steps, the parts that read the UI tree: double taps, and typing seen in tree diffs.

Used by ``collectors.recorder`` at assembly; entries are its dicts (``action``, ``down``, ``up``, ``frame``).
"""

from __future__ import annotations

from collectors.classify import DOUBLE_TAP_MS, DOUBLE_TAP_SLOP_DP
from collectors.pairing import Tree
from datalake.types import Action
from datalake.uitree import UIElement, parse_ui_tree

KEYBOARD_ZONE = 0.6  # without a keyboard node in the tree: taps below this fraction of the height may be typing


def merge_double_taps(entries: list[dict], dpi: int) -> list[dict]:
    out: list[dict] = []
    slop = DOUBLE_TAP_SLOP_DP * dpi / 160
    for e in entries:
        p = out[-1] if out else None
        a = e["action"]
        if p is not None and a.type == "tap" and p["action"].type == "tap" and p["frame"].sha == e["frame"].sha and \
                (e["down"] - p["up"]) * 1000 <= DOUBLE_TAP_MS and abs(a.x - p["action"].x) <= slop and \
                abs(a.y - p["action"].y) <= slop:
            q = p["action"]
            p["action"] = Action("double_tap", x=q.x, y=q.y, element=q.element)
            p["up"] = e["up"]
            continue
        out.append(e)
    return out


def _focused(elements: list[UIElement]) -> UIElement | None:
    return next((e for e in elements if e.focused and "Edit" in e.class_name), None)


def text_changes(a: Tree, b: Tree) -> list[UIElement]:
    """Edit fields of ``b`` whose text differs from the same field (by resource id) in ``a``."""
    if a.xml == b.xml:
        return []
    before = {e.resource_id: e.text for e in parse_ui_tree(a.xml) if "Edit" in e.class_name and e.resource_id}
    return [e for e in parse_ui_tree(b.xml) if "Edit" in e.class_name and e.resource_id in before
            and before[e.resource_id] != e.text]


def is_key_tap(entry: dict, tree: Tree, height: int) -> bool:
    """A tap on the soft keyboard: the IME is its own window, absent from the dump, and the app's window
    shrinks above it; so a tap below every element of the app (and above the nav bar) while a field
    has focus hit the keyboard."""
    a = entry["action"]
    if a.type != "tap":
        return False
    els = parse_ui_tree(tree.xml)
    board = next((e for e in els if "Keyboard" in e.class_name or "inputmethod" in e.package), None)
    if board is not None:
        return board.contains(a.x, a.y)
    if _focused(els) is None:
        return False
    app = [e for e in els if e.package and e.package != "com.android.systemui" and e.parent is not None]
    nav_top = min((e.bounds[1] for e in els if e.package == "com.android.systemui" and e.bounds[1] > height // 2),
                  default=height)
    bottom = max((e.bounds[3] for e in app), default=int(KEYBOARD_ZONE * height))
    return bottom <= a.y < nav_top


def targets(entry: dict, field: UIElement) -> bool:
    el = entry["action"].element
    return el is not None and el.resource_id == (field.resource_id or None)
