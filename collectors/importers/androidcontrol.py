"""AndroidControl: GZIP TFRecords, one ``tf.train.Example`` per *episode*.

Features: ``episode_id``, ``goal``, ``screenshots`` (PNG bytes, one more than there
are actions: the last shows the end state and has no action, so it is not a step),
``screenshot_widths`` / ``screenshot_heights``, ``accessibility_trees`` (serialized
``AndroidAccessibilityForest``, converted to uiautomator XML), ``actions`` (JSON
strings, absolute pixels of that step's screen) and ``step_instructions``.

Actions: click -> tap, long_press, scroll(direction) (AndroidWorld's convention, as
ours), open_app(app_name), input_text, navigate_home / navigate_back -> key, wait.
A step whose declared screen size differs from its PNG has its coordinates scaled to
the PNG. The step's low-level instruction is ``meta.step_instruction``; the action
record as published is ``meta.original``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from google.protobuf.message import DecodeError

from collectors.importers import protos
from collectors.importers.base import Item, abs_px, dataset_files, dataset_meta, episode_id, tfrecord_file
from collectors.importers.tfrecord import CorruptRecord, read_records
from datalake.errors import InvalidRecord
from datalake.types import Action, Device, Episode, Observation, Step, png_size

NAME = "androidcontrol"
_KEYS = {"navigate_home": "home", "navigate_back": "back"}
_FLAGS = {"checkable": "is_checkable", "checked": "is_checked", "clickable": "is_clickable",
          "enabled": "is_enabled", "focusable": "is_focusable", "focused": "is_focused",
          "scrollable": "is_scrollable", "long-clickable": "is_long_clickable", "password": "is_password",
          "selected": "is_selected"}


def forest_to_xml(data: bytes) -> str:
    """A serialized AndroidAccessibilityForest -> a uiautomator-style XML dump (windows in order)."""
    forest = protos.AndroidAccessibilityForest()
    try:
        forest.ParseFromString(data)
    except DecodeError as exc:
        raise InvalidRecord(f"accessibility tree is not an AndroidAccessibilityForest: {exc}") from None
    root = ET.Element("hierarchy", rotation="0")
    for window in forest.windows:
        nodes = {n.unique_id: n for n in window.tree.nodes}
        children = {c for n in window.tree.nodes for c in n.child_ids}
        seen: set[int] = set()
        for node in window.tree.nodes:
            if node.unique_id not in children:
                _add_node(root, node, nodes, seen, index=0)
    return ET.tostring(root, encoding="unicode")


def _add_node(parent: ET.Element, node, nodes: dict, seen: set[int], index: int) -> None:
    if node.unique_id in seen:  # a cycle or a node listed twice: emit it once
        return
    seen.add(node.unique_id)
    b = node.bounds_in_screen
    attrs = {"index": str(index), "text": node.text, "resource-id": node.view_id_resource_name,
             "class": node.class_name, "package": node.package_name, "content-desc": node.content_description,
             "bounds": f"[{b.left},{b.top}][{b.right},{b.bottom}]"}
    attrs.update({name: "true" if getattr(node, field) else "false" for name, field in _FLAGS.items()})
    element = ET.SubElement(parent, "node", attrs)
    for k, child_id in enumerate(node.child_ids):
        if child_id in nodes:
            _add_node(element, nodes[child_id], nodes, seen, k)


def convert_action(record: dict, declared: tuple[int, int], actual: tuple[int, int]) -> Action:
    kind = record.get("action_type")
    sx, sy = actual[0] / declared[0], actual[1] / declared[1]

    def point() -> dict:
        x = abs_px(record.get("x"), declared[0], "x")
        y = abs_px(record.get("y"), declared[1], "y")
        return {"x": min(round(x * sx), actual[0] - 1), "y": min(round(y * sy), actual[1] - 1)} \
            if (sx, sy) != (1, 1) else {"x": x, "y": y}

    if kind == "click":
        return Action("tap", **point())
    if kind == "long_press":
        return Action("long_press", **point())
    if kind == "scroll":
        return Action("scroll", direction=record.get("direction"))
    if kind == "open_app":
        return Action("open_app", app=record.get("app_name"))
    if kind == "input_text":
        return Action("input_text", text=record.get("text"))
    if kind in _KEYS:
        return Action("key", key=_KEYS[kind])
    if kind == "wait":
        return Action("wait")
    raise InvalidRecord(f"unknown action type {kind!r}")


def _list(feats: dict, name: str) -> list:
    if name not in feats:
        raise InvalidRecord(f"missing feature {name!r}")
    return feats[name]


def episode_from_features(feats: dict, split: str | None) -> Episode:
    orig_id = int(_list(feats, "episode_id")[0])
    shots, actions = _list(feats, "screenshots"), _list(feats, "actions")
    widths, heights = _list(feats, "screenshot_widths"), _list(feats, "screenshot_heights")
    trees, instructions = feats.get("accessibility_trees", []), feats.get("step_instructions", [])
    if len(shots) != len(actions) + 1 or len(widths) != len(shots) or len(heights) != len(shots):
        raise InvalidRecord(f"{len(shots)} screenshots ({len(widths)} widths, {len(heights)} heights) for "
                            f"{len(actions)} actions: expected one screenshot more than actions")
    steps = []
    for i, raw_action in enumerate(actions):
        try:
            record = json.loads(raw_action)
            if not isinstance(record, dict):
                raise InvalidRecord("action is not a JSON object")
            actual = png_size(shots[i])
            action = convert_action(record, (int(widths[i]), int(heights[i])), actual)
            tree = forest_to_xml(trees[i]) if i < len(trees) and trees[i] else None
        except (InvalidRecord, ValueError) as exc:
            raise InvalidRecord(f"step {i}: {exc}") from None
        meta = {"original": record}
        if i < len(instructions):
            meta["step_instruction"] = instructions[i].decode("utf-8")
        steps.append(Step(Observation(shots[i], ui_tree=tree), action, meta=meta))
    width, height = png_size(shots[0])
    return Episode(instruction=_list(feats, "goal")[0].decode("utf-8"), source="public", device=Device(width, height),
                   steps=tuple(steps), episode_id=episode_id(NAME, orig_id),
                   meta={"dataset": dataset_meta(NAME, split, episode_id=orig_id, screenshots=len(shots))})


def items(paths: list[str], known: set[str], split: str | None = None) -> Iterator[Item]:
    for path in dataset_files(paths, accept=tfrecord_file):
        if isinstance(path, Item):
            yield path
            continue
        origin = str(path)
        for rec in read_records(path):
            locator = f"record {rec.number} at byte {rec.offset}"
            if isinstance(rec, CorruptRecord):
                yield Item(origin, locator, None, rec.data, error=f"TFRecord: {rec.reason}")
                continue
            lake_id = None
            try:
                feats = protos.features(rec.data)
                lake_id = episode_id(NAME, int(_list(feats, "episode_id")[0]))
                if lake_id in known:
                    yield Item(origin, locator, lake_id, skipped=True)
                    continue
                episode = episode_from_features(feats, split)
            except (DecodeError, InvalidRecord, UnicodeDecodeError) as exc:
                yield Item(origin, locator, lake_id, rec.data, error=str(exc))
            else:
                yield Item(origin, locator, lake_id, episode=episode)
