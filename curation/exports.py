"""Exports: the curated episodes as Parquet shards that ``datasets`` and TRL read directly.

- ``sft``: one row per step: TRL ``messages`` (system, user with the screenshot(s) and
  the last ``history`` actions, assistant with the action text) + ``images``.
- ``grpo``: one row per step: ``prompt`` (system + user) + ``images`` + a verifiable
  target: ``target_action`` (JSON, model coordinates) and ``target_box`` (the target
  element's bounds in model coordinates, when known).
- ``episodes``: one row per episode: instruction, outcome, actions (device px), images.

With ``elements: true`` (sft, grpo) the user turn also lists the screen's numbered UI
elements (``curation.elements``) and sft answers name a point action's target by its
number (``{"action": "click", "element": 3}``); grpo targets stay coordinates, and the
rewards read the numbers back from the element list in the prompt.

Files are ``<format>/<split>-NNNNN-of-MMMMM.parquet``, each at most ``max_shard_bytes``,
with the ``datasets`` features in the schema metadata (images are ``Image`` features).
Rows are written in a fixed order and the writer is deterministic, so the same
working set gives byte-identical files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features, Image, List, Value

from curation.coords import box_to_model
from curation.elements import format_with_marks, marks, render_marks
from curation.formats import format_action
from curation.workset import EpisodeRow, StepRow

MAX_SHARD_BYTES = 500 * 1024 * 1024
_TEXT = Value("string")
_MESSAGES = List({"role": _TEXT, "content": List({"type": _TEXT, "text": _TEXT})})
_IDS = {"episode_id": _TEXT, "step_index": Value("int32"), "app": _TEXT, "source": _TEXT, "phone": _TEXT,
        "split": _TEXT, "safety_tags": List(_TEXT)}
FEATURES = {
    "sft": Features({"messages": _MESSAGES, "images": List(Image()), **_IDS}),
    "grpo": Features({"prompt": _MESSAGES, "images": List(Image()), "target_action": _TEXT,
                      "target_box": List(Value("float64")), "width": Value("int32"), "height": Value("int32"),
                      "coords": _TEXT, "action_format": _TEXT, **_IDS}),
    "episodes": Features({"episode_id": _TEXT, "instruction": _TEXT, "app": _TEXT, "category": _TEXT,
                          "task": _TEXT, "source": _TEXT, "phone": _TEXT, "outcome": _TEXT,
                          "verified_by": _TEXT, "split": _TEXT, "safety_tags": List(_TEXT),
                          "actions": List(_TEXT), "images": List(Image()), "record": _TEXT}),
}

SYSTEM = {
    "qwen3vl": ("You are a phone-use agent. You see the current screenshot of an Android phone and act with the "
                "mobile_use tool: actions click, double_tap, long_press, swipe, scroll, type, system_button "
                "(Back, Home, Enter, AppSwitch), open, wait, answer, ask_user, terminate. Coordinates are {coords}. "
                "Reply with exactly one <tool_call>{{\"name\": \"mobile_use\", \"arguments\": {{...}}}}</tool_call>."),
    "json": ("You are a phone-use agent. You see the current screenshot of an Android phone and reply with one "
             "action as JSON, e.g. {{\"type\":\"tap\",\"x\":..,\"y\":..}}. Types: tap, double_tap, long_press, swipe, "
             "scroll, input_text, key, open_app, wait, answer, ask_user, terminate. Coordinates are {coords}."),
}
COORDS_TEXT = {"abs": "screen pixels", "resized": "pixels of the resized image", "rel1000": "0-1000 on each axis",
               "rel1": "0-1 on each axis"}

ELEMENTS_TEXT = (" The screen's elements are listed as [number] class \"text\" id=resource-id (box); "
                 "name a target by its number, e.g. \"element\": 3, instead of a coordinate.")

FrameSource = Callable[[StepRow], bytes]  # the PNG a step shows (redacted copy or lake frame)


def _image(png: bytes) -> dict:
    return {"bytes": png, "path": None}


def _ids(e: EpisodeRow, s: StepRow) -> dict:
    return {"episode_id": e.episode_id, "step_index": s.index, "app": e.app, "source": e.source, "phone": e.phone,
            "split": e.split, "safety_tags": list(e.tags)}


def prompt_messages(e: EpisodeRow, i: int, params: dict, n_images: int) -> list[dict]:
    """System + user messages for kept step ``i`` of ``e`` (shared by sft and grpo). The
    previous actions are the recorded ones (``e.trajectory``), dropped steps included;
    steps whose recorded action does not validate are left out of the list. With
    ``elements: true`` the user turn also lists the screen's numbered UI elements."""
    past = [s for s in e.history(e.steps[i]) if s.action is not None]
    n = params["history"]
    history = [(s.action, (s.width, s.height)) for s in (past[-n:] if n else [])]
    s = e.steps[i]
    screen = render_marks(marks(s.ui_tree, (s.width, s.height)), params["coords"], (s.width, s.height)) \
        if params.get("elements") else None
    return build_prompt(e.instruction, history, params, n_images, elements=screen)


def build_prompt(instruction: str, history: list, params: dict, n_images: int,
                 elements: str | None = None) -> list[dict]:
    """The prompt a model sees: the system text for the action format, then the screenshot
    placeholder(s), the task and the last actions; with ``elements`` (rendered by
    ``curation.elements.render_marks``) the screen's numbered elements come first, so that the
    task and the history sit next to the answer (a small model attends to them far more easily). ``history`` is [(Action, (width, height))]
    already cut to ``params["history"]``; policies call this too, so training and rollouts
    use the same prompt."""
    style, coords = params["action_format"], params["coords"]
    lines = [f"Task: {instruction}"]
    if history:
        lines.append("Previous actions:")
        lines.extend(f"{k + 1}. {format_action(a, style, coords, size)}" for k, (a, size) in enumerate(history))
    if elements is not None:  # the long list first, the task and history last (next to the answer)
        lines = ["Elements:", elements or "(none)"] + lines
    user = [{"type": "image", "text": None} for _ in range(n_images)]
    user.append({"type": "text", "text": "\n".join(lines)})
    system = SYSTEM[style].format(coords=COORDS_TEXT[coords.split(":")[0]])
    if elements is not None:
        system += ELEMENTS_TEXT
    return [{"role": "system", "content": [{"type": "text", "text": system}]}, {"role": "user", "content": user}]


def sft_rows(ws: list[EpisodeRow], params: dict, frame: FrameSource) -> Iterator[dict]:
    for e in ws:
        for i, s in enumerate(e.steps):
            images = [frame(s)]
            past = e.history(s)
            if params["previous_screenshot"] and past:
                images.insert(0, frame(past[-1]))
            answer = _answer(s, params)
            if params["thought"] and s.thought:
                answer = f"{s.thought}\n{answer}"
            messages = prompt_messages(e, i, params, len(images))
            messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
            yield {"messages": messages, "images": [_image(p) for p in images], **_ids(e, s)}


def _answer(s: StepRow, params: dict) -> str:
    size = (s.width, s.height)
    if params.get("elements"):
        return format_with_marks(s.action, params["action_format"], params["coords"], size, marks(s.ui_tree, size))
    return format_action(s.action, params["action_format"], params["coords"], size)


def grpo_rows(ws: list[EpisodeRow], params: dict, frame: FrameSource) -> Iterator[dict]:
    for e in ws:
        for i, s in enumerate(e.steps):
            size = (s.width, s.height)
            box = s.action.element.bounds if s.action.element is not None else None
            yield {"prompt": prompt_messages(e, i, params, 1), "images": [_image(frame(s))],
                   "target_action": format_action(s.action, "json", params["coords"], size),
                   "target_box": box_to_model(box, params["coords"], size) if box else None,
                   "width": s.width, "height": s.height, "coords": params["coords"],
                   "action_format": params["action_format"], **_ids(e, s)}


def episode_rows(ws: list[EpisodeRow], params: dict, frame: FrameSource) -> Iterator[dict]:
    for e in ws:
        yield {"episode_id": e.episode_id, "instruction": e.instruction, "app": e.app, "category": e.category,
               "task": e.task, "source": e.source, "phone": e.phone, "outcome": e.outcome,
               "verified_by": e.verified_by, "split": e.split, "safety_tags": list(e.tags),
               "actions": [s.action.to_json() for s in e.steps], "images": [_image(frame(s)) for s in e.steps],
               "record": json_dumps(episode_record(e))}


def episode_record(e: EpisodeRow) -> dict:
    """Everything else the lake knows about an exported episode (its curated, redacted form),
    so ``phoneloop lake import hf://...`` rebuilds the same episode in another lake."""
    steps = [{k: v for k, v in (("ui_tree", s.ui_tree), ("package", s.package), ("activity", s.activity),
                                ("thought", s.thought), ("raw_output", s.raw_output), ("meta", s.meta or None))
              if v is not None} for s in e.steps]
    fields = {"device": e.device or {"width": e.width, "height": e.height, "kind": e.phone}, "policy": e.policy,
              "round": e.round, "purpose": e.purpose, "failure_reason": e.failure_reason, "score": e.score,
              "meta": e.meta or None, "steps": steps}
    return {k: v for k, v in fields.items() if v is not None}


ROWS = {"sft": sft_rows, "grpo": grpo_rows, "episodes": episode_rows}


def write_export(fmt: str, ws: list[EpisodeRow], params: dict, frame: FrameSource, out: Path, *,
                 max_shard_bytes: int = MAX_SHARD_BYTES, progress: Callable[[int], None] | None = None
                 ) -> dict[str, Any]:
    """Write one format's shards under ``out/fmt``; returns rows and files per split."""
    schema = FEATURES[fmt].arrow_schema
    folder = out / fmt
    folder.mkdir(parents=True, exist_ok=True)
    by_split: dict[str, list[EpisodeRow]] = {}
    for e in ws:
        by_split.setdefault(e.split or "train", []).append(e)
    summary: dict[str, Any] = {}
    for split in sorted(by_split):
        shards = _write_shards(ROWS[fmt](by_split[split], params, frame), schema, folder, split,
                               max_shard_bytes, progress)
        summary[split] = {"rows": sum(n for _, n in shards), "files": [f"{fmt}/{p.name}" for p, _ in shards]}
    return summary


def _write_shards(rows: Iterator[dict], schema: pa.Schema, folder: Path, split: str, max_bytes: int,
                  progress) -> list[tuple[Path, int]]:
    written: list[tuple[Path, int]] = []
    batch: list[dict] = []
    size = 0

    def flush() -> None:
        nonlocal batch, size
        path = folder / f".{split}-{len(written):05d}.parquet"
        pq.write_table(pa.Table.from_pylist(batch, schema=schema), path, row_group_size=256)
        written.append((path, len(batch)))
        batch, size = [], 0

    for row in rows:
        batch.append(row)
        size += sum(len(img["bytes"]) for img in row["images"]) + 2048
        if progress is not None:
            progress(1)
        if size >= max_bytes:
            flush()
    if batch or not written:
        flush()
    final = []
    for k, (path, n) in enumerate(written):
        target = folder / f"{split}-{k:05d}-of-{len(written):05d}.parquet"
        path.replace(target)
        final.append((target, n))
    return final


def json_dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=2)
