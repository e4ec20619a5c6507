"""Redaction of personal data: phone numbers, emails, card numbers (Luhn-checked) and ID
numbers (Chinese resident IDs with their check digit, US SSNs) in instructions, typed
text, thoughts and UI text; the screenshot regions of UI nodes that held PII are blurred.

Every redaction is recorded (episode, step, field, kind, count) without the value, and
goes into the dataset version's ``redactions.jsonl``. The lake is not modified: blurred
screenshots replace the frame only in this dataset's exports.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from io import BytesIO

from PIL import Image, ImageFilter

from curation.ops.base import Context
from curation.workset import EpisodeRow, StepRow
from datalake.uitree import parse_bounds

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
CARD = re.compile(r"(?<![\w])(?:\d[ -]?){12,18}\d(?![\w])")
CN_ID = re.compile(r"(?<![\w])\d{17}[\dXx](?![\w])")
SSN = re.compile(r"(?<![\w])\d{3}-\d{2}-\d{4}(?![\w])")
PHONE = re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,5}){1,3}(?![\w])")
DATE = re.compile(r"^\d{4}[-./]\d{1,2}[-./]\d{1,2}$")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def cn_id_ok(value: str) -> bool:
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    check = "10X98765432"[sum(int(c) * w for c, w in zip(value[:17], weights)) % 11]
    return value[17].upper() == check


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping PII spans, strongest evidence first (email, card, id, phone)."""
    found: list[tuple[int, int, str]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e, _ in found)

    for m in EMAIL.finditer(text):
        found.append((m.start(), m.end(), "EMAIL"))
    for m in CN_ID.finditer(text):
        if free(*m.span()) and cn_id_ok(m.group()):
            found.append((m.start(), m.end(), "ID"))
    for m in SSN.finditer(text):
        if free(*m.span()):
            found.append((m.start(), m.end(), "ID"))
    for m in CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if free(*m.span()) and 13 <= len(digits) <= 19 and luhn_ok(digits):
            found.append((m.start(), m.end(), "CARD"))
    for m in PHONE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if free(*m.span()) and 7 <= len(digits) <= 15 and not DATE.match(m.group()):
            found.append((m.start(), m.end(), "PHONE"))
    return sorted(found)


def redact_text(text: str | None) -> tuple[str | None, Counter]:
    """``text`` with every PII span replaced by ``[KIND]``, and the kinds found."""
    if not text:
        return text, Counter()
    spans = _spans(text)
    if not spans:
        return text, Counter()
    out, pos = [], 0
    for start, end, kind in spans:
        out.append(text[pos:start])
        out.append(f"[{kind}]")
        pos = end
    out.append(text[pos:])
    return "".join(out), Counter(kind for _, _, kind in spans)


def _redact_tree(xml: str) -> tuple[str, list[tuple[int, int, int, int]], Counter]:
    root = ET.fromstring(xml)
    boxes, kinds = [], Counter()
    for node in root.iter("node"):
        hit = False
        for attr in ("text", "content-desc"):
            new, found = redact_text(node.get(attr))
            if found:
                node.set(attr, new)
                kinds += found
                hit = True
        if hit and node.get("bounds"):
            boxes.append(parse_bounds(node.get("bounds")))
    if not kinds:
        return xml, [], kinds
    return ET.tostring(root, encoding="unicode"), boxes, kinds


def blur_boxes(png: bytes, boxes: list[tuple[int, int, int, int]]) -> bytes:
    img = Image.open(BytesIO(png)).convert("RGB")
    for x1, y1, x2, y2 in boxes:
        x1, y1 = max(0, x1), max(0, y1)
        x2, y2 = min(img.width, x2), min(img.height, y2)
        if x2 <= x1 or y2 <= y1:
            continue
        region = img.crop((x1, y1, x2, y2))
        img.paste(region.filter(ImageFilter.GaussianBlur(radius=max(6, (y2 - y1) // 3))), (x1, y1))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def redact(ws: list[EpisodeRow], ctx: Context, *, blur: bool = True) -> list[EpisodeRow]:
    """Replace PII in text fields and blur the screen regions of UI nodes that showed it."""
    records: list[dict] = []
    totals: Counter = Counter()

    def note(episode_id: str, step: int | None, field: str, kinds: Counter) -> None:
        for kind, n in sorted(kinds.items()):
            records.append({"episode_id": episode_id, "step_index": step, "field": field, "kind": kind, "count": n})
            totals[f"{field}:{kind}"] += n

    out = []
    for e in ws:
        instruction, kinds = redact_text(e.instruction)
        note(e.episode_id, None, "instruction", kinds)
        steps = [_redact_step(e.episode_id, s, ctx, blur, note) for s in e.steps]
        out.append(replace(e, instruction=instruction, steps=steps))
    ctx.details["redactions"] = dict(sorted(totals.items()))
    ctx.details["redaction_records"] = records
    return out


def _redact_step(episode_id: str, s: StepRow, ctx: Context, blur: bool, note) -> StepRow:
    changes: dict = {}
    for field in ("thought", "raw_output"):
        new, kinds = redact_text(getattr(s, field))
        if kinds:
            changes[field] = new
            note(episode_id, s.index, field, kinds)
    if s.action is not None and s.action.text:
        new, kinds = redact_text(s.action.text)
        if kinds:
            action = replace(s.action, text=new)
            changes.update(action=action, action_json=action.to_json())
            note(episode_id, s.index, "typed_text", kinds)
    if s.ui_tree:
        try:
            tree, boxes, kinds = _redact_tree(s.ui_tree)
        except ET.ParseError:
            tree, boxes, kinds = s.ui_tree, [], Counter()
        if kinds:
            changes["ui_tree"] = tree
            note(episode_id, s.index, "ui_text", kinds)
            if blur and boxes:
                changes["image"] = blur_boxes(s.image or ctx.frame(s.frame_sha), boxes)
                note(episode_id, s.index, "screenshot_blur", Counter({"REGION": len(boxes)}))
    return replace(s, **changes) if changes else s
