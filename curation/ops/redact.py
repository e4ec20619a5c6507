"""Redaction of personal data: consistent pseudonyms in every string, blurred pixels.

Applies to episodes from the phones in ``phones`` (by default only ``real``: mock
phones show synthetic people, and rewriting them would only teach wrong targets).
For each such episode, every string field is scanned with ``curation.pii`` (phone
numbers via ``phonenumbers``, cards via Luhn, Chinese ids and US SSNs via
``python-stdnum``, emails): the instruction, the episode and step ``meta``, the
episode's category, policy, failure reason and device record, thoughts, raw model
output, the step's package and activity, every action field (typed text, answers, element text /
content-desc / resource id), and every attribute of every UI-tree node (text,
content-desc, hint, ...). Each value becomes a plausible fake, the same fake
everywhere in the episode, so the action that types the number the instruction names
still types the number the (pseudonymised) instruction names.

Pixels: the bounds of every tree node that held PII are blurred; screens without a
tree are read by OCR (``curation.ocr``) and every text line that holds PII, an ``@`` or
seven or more digits is blurred (``ocr: always`` reads every screen, ``never`` none).

Every change is recorded (episode, step, field, kind, count), never the value, and
goes into the dataset version's ``redactions.jsonl``. The lake is not modified. The
episode before redaction stays in ``unredacted`` so tags that need the true content
(``safety_tags``) see it whatever the op order.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from io import BytesIO

from PIL import Image, ImageFilter

from curation.ocr import text_boxes
from curation.ops.base import Context
from curation.pii import Pseudonyms, find_pii
from curation.workset import EpisodeRow, StepRow, parse_action
from datalake.types import Action
from datalake.uitree import parse_bounds

OCR_MODES = ("no_tree", "always", "never")
# Free-text fields besides the instruction, meta, actions and trees. ``app`` and ``task``
# are identifiers (package names, template ids) that grouping and reports key on: kept.
EPISODE_TEXT = ("category", "policy", "failure_reason", "device")
STEP_TEXT = ("thought", "raw_output", "package", "activity")


def redact(ws: list[EpisodeRow], ctx: Context, *, phones: list[str] | None = None, blur: bool = True,
           ocr: str = "no_tree") -> list[EpisodeRow]:
    """Pseudonymise PII in every string of episodes from ``phones`` (default: real) and blur
    it on screen (tree bounds; OCR on screens without a tree)."""
    if ocr not in OCR_MODES:
        raise ValueError(f"ocr must be one of {', '.join(OCR_MODES)}, not {ocr!r}")
    phones = ["real"] if phones is None else phones
    records: list[dict] = []
    totals: Counter = Counter()

    def note(episode_id: str, step: int | None, field: str, kinds) -> None:
        for kind, n in sorted(Counter(kinds).items()):
            records.append({"episode_id": episode_id, "step_index": step, "field": field, "kind": kind, "count": n})
            totals[f"{field}:{kind}"] += n

    out = []
    todo = [e for e in ws if e.phone in phones]
    for done, e in enumerate(ws):
        if e.phone not in phones:
            out.append(e)
            continue
        out.append(_redact_episode(e, ctx, blur, ocr, note))
        if ctx.progress:
            ctx.progress("redacting", done + 1, len(todo))
    ctx.details["redactions"] = dict(sorted(totals.items()))
    ctx.details["redaction_records"] = records
    ctx.details["redacted_phones"] = sorted(phones)
    ctx.details["blur"] = blur
    return out


def _redact_episode(e: EpisodeRow, ctx: Context, blur: bool, ocr: str, note) -> EpisodeRow:
    names = Pseudonyms(e.episode_id)
    instruction, kinds = names.replace(e.instruction)
    note(e.episode_id, None, "instruction", kinds)
    meta, kinds = _redact_value(e.meta, names)
    note(e.episode_id, None, "meta", kinds)
    fields = {}
    for field in EPISODE_TEXT:
        fields[field], kinds = _redact_value(getattr(e, field), names)
        note(e.episode_id, None, field, kinds)
    done: dict[int, StepRow] = {}

    def one(s: StepRow) -> StepRow:
        if id(s) not in done:
            done[id(s)] = _redact_step(e.episode_id, s, ctx, names, blur, ocr, note)
        return done[id(s)]

    trajectory = tuple(one(s) for s in e.trajectory)
    steps = [one(s) for s in e.steps]
    return replace(e, instruction=instruction, meta=meta, steps=steps, trajectory=trajectory,
                   unredacted=e.unredacted or e, **fields)


def _redact_value(value, names: Pseudonyms):
    """Strings anywhere in a JSON-like value, pseudonymised; returns (value, kinds)."""
    if isinstance(value, str):
        return names.replace(value)
    if isinstance(value, dict):
        kinds, out = [], {}
        for k, v in value.items():
            out[k], found = _redact_value(v, names)
            kinds += found
        return out, kinds
    if isinstance(value, list):
        pairs = [_redact_value(v, names) for v in value]
        return [v for v, _ in pairs], [k for _, found in pairs for k in found]
    return value, []


def _redact_step(episode_id: str, s: StepRow, ctx: Context, names: Pseudonyms, blur: bool, ocr: str,
                 note) -> StepRow:
    changes: dict = {}
    for field in STEP_TEXT:
        new, kinds = names.replace(getattr(s, field))
        if kinds:
            changes[field] = new
            note(episode_id, s.index, field, kinds)
    meta, kinds = _redact_value(s.meta, names)
    if kinds:
        changes["meta"] = meta
        note(episode_id, s.index, "step_meta", kinds)
    if s.action is not None:
        data, kinds = _redact_value(s.action.to_dict(), names)
        if kinds:
            action = Action.from_dict(data)
            changes.update(action=action, action_json=action.to_json())
            note(episode_id, s.index, "action", kinds)
    else:
        new, kinds = names.replace(s.action_json)
        if kinds:
            changes.update(action_json=new, action=parse_action(new))
            note(episode_id, s.index, "action", kinds)
    boxes: list[tuple[int, int, int, int]] = []
    tree_ok = False
    if s.ui_tree:
        try:
            tree, boxes, kinds = _redact_tree(s.ui_tree, names)
            tree_ok = True
        except ET.ParseError:
            tree, boxes, kinds = _redact_text_tree(s.ui_tree, names)
        if kinds:
            changes["ui_tree"] = tree
            note(episode_id, s.index, "ui_tree", kinds)
    png = s.image or ctx.frame(s.frame_sha)
    if ocr == "always" or (ocr == "no_tree" and not tree_ok):
        found = [box for box, text in text_boxes(png) if _suspicious(text)]
        if found:
            note(episode_id, s.index, "screenshot_ocr", ["TEXT"] * len(found))
        boxes += found
    if blur and boxes:
        changes["image"] = blur_boxes(png, boxes)
        note(episode_id, s.index, "screenshot_blur", ["REGION"] * len(boxes))
    return replace(s, **changes) if changes else s


def _suspicious(text: str) -> bool:
    """An OCR line to blur: PII found, or what OCR may have garbled from it."""
    return bool(find_pii(text)) or "@" in text or sum(ch.isdigit() for ch in text) >= 7


def _redact_tree(xml: str, names: Pseudonyms):
    root = ET.fromstring(xml)
    boxes, kinds = [], []
    for node in root.iter():
        hit = False
        for attr, value in list(node.attrib.items()):
            if attr == "bounds":
                continue
            new, found = names.replace(value)
            if found:
                node.set(attr, new)
                kinds += found
                hit = True
        if node.text and node.text.strip():
            node.text, found = names.replace(node.text)
            kinds += found
            hit = hit or bool(found)
        if hit and node.get("bounds"):
            try:
                boxes.append(parse_bounds(node.get("bounds")))
            except ValueError:
                pass
    if not kinds:
        return xml, [], kinds
    return ET.tostring(root, encoding="unicode"), boxes, kinds


def _redact_text_tree(xml: str, names: Pseudonyms):
    """A tree that does not parse is still text: pseudonymise it as such (no boxes)."""
    new, kinds = names.replace(xml)
    return new, [], kinds


def blur_boxes(png: bytes, boxes: list[tuple[int, int, int, int]]) -> bytes:
    """The PNG with each box made unreadable: averaged down to a few pixels, then blurred."""
    img = Image.open(BytesIO(png)).convert("RGB")
    for x1, y1, x2, y2 in boxes:
        x1, y1 = max(0, x1), max(0, y1)
        x2, y2 = min(img.width, x2), min(img.height, y2)
        if x2 <= x1 or y2 <= y1:
            continue
        region = img.crop((x1, y1, x2, y2))
        small = region.resize((max(1, (x2 - x1) // 16), max(1, (y2 - y1) // 16)), Image.Resampling.BOX)
        region = small.resize(region.size, Image.Resampling.BILINEAR)
        img.paste(region.filter(ImageFilter.GaussianBlur(radius=max(4, (y2 - y1) // 2))), (x1, y1))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def redaction_summary(records: list[dict]) -> str:
    """JSON lines for ``redactions.jsonl``."""
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
