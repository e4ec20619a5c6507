"""Redaction of personal data: consistent pseudonyms in every string, blurred pixels.

Applies to episodes from the phones in ``phones`` (by default only ``real``: mock
phones show synthetic people, and rewriting them would only teach wrong targets).
For each such episode, every string field is scanned with ``curation.pii`` (emails,
phone numbers, cards, IBANs, national ids, street addresses, person names, QQ / WeChat
handles): the instruction, the episode and step ``meta``, the episode's category,
policy, failure reason and device record, thoughts, raw model output, the step's package
and activity, every action field (typed text, answers, element text / content-desc /
resource id), and every attribute of every UI-tree node. Names found anywhere in the
scanned episodes (and the ``names`` a recipe lists: the owner's contacts) are then looked
for everywhere, alone too. Each value becomes a fake from a reserved range
(``curation.fakes``), the same fake for the same value everywhere in the lake, so the
action that types the number the instruction names still types the number the
(pseudonymised) instruction names.

Pixels: the bounds of every tree node that held PII are blurred. With ``ocr: every``
(the default) every screen is read: each distinct frame (by sha) is decoded once, its
text lines are found without a model (``curation.ocr.text_regions``), lines inside a
UI-tree text node whose text was scanned above are skipped (a screen whose tree covers
all drawn text costs no recognition), and the rest are recognised; every line whose
text holds detected PII, an ``@`` or a run of five or more digits (spaces and dashes
between them allowed) is blurred. ``ocr: no_tree`` reads only screens without a tree,
``never`` none.

Every change is recorded (episode, step, field, kind, count), never the value, and
goes into the dataset version's ``redactions.jsonl``. The lake is not modified. The
episode before redaction stays in ``unredacted`` so tags that need the true content
(``safety_tags``) see it whatever the op order.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace

import numpy as np
from PIL import Image, ImageFilter

from curation import ocr as ocr_engine
from curation.fakes import Pseudonyms, lake_salt
from curation.ops.base import Context
from curation.pii import Detector
from curation.workset import EpisodeRow, StepRow, parse_action
from datalake.png import encode_png
from datalake.types import Action
from datalake.uitree import parse_bounds

OCR_MODES = ("every", "no_tree", "never", "always")  # "always" is the old name of "every"
_DIGIT_RUN = re.compile(r"\d(?:[ \-.]?\d){4,}")
# A line whose ink is narrower than this many times its height holds one glyph or two Latin
# letters (a keyboard key, an icon, an avatar's initials): never an email, a 5-digit run or
# any value detected here (a two-character Chinese name is wider), so it is not read.
MIN_READ_ASPECT = 1.5
COVERING_NODE_MAX_PX = 300  # a tree node taller than this (a WebView, a list) does not vouch for its pixels
COVER_SLACK_PX = 8  # text is drawn up to this far outside its node's bounds (anti-aliasing, outlines)
# Free-text fields besides the instruction, meta, actions and trees. ``app`` and ``task``
# are identifiers (package names, template ids) that grouping and reports key on: kept.
EPISODE_TEXT = ("category", "policy", "failure_reason", "device")
STEP_TEXT = ("thought", "raw_output", "package", "activity")


def redact(ws: list[EpisodeRow], ctx: Context, *, phones: list[str] | None = None, blur: bool = True,
           ocr: str = "every", names: list[str] | None = None) -> list[EpisodeRow]:
    """Pseudonymise PII in every string of episodes from ``phones`` (default: real) and blur
    it on screen (tree bounds; OCR of every screen's text lines not covered by the tree).
    ``names``: people to look for besides those the rules find (e.g. the phone owner's contacts)."""
    if ocr not in OCR_MODES:
        raise ValueError(f"ocr must be one of {', '.join(OCR_MODES[:3])}, not {ocr!r}")
    ocr = "every" if ocr == "always" else ocr
    phones = ["real"] if phones is None else phones
    records: list[dict] = []
    totals: Counter = Counter()

    def note(episode_id: str, step: int | None, field: str, kinds) -> None:
        for kind, n in sorted(Counter(kinds).items()):
            records.append({"episode_id": episode_id, "step_index": step, "field": field, "kind": kind, "count": n})
            totals[f"{field}:{kind}"] += n

    todo = [e for e in ws if e.phone in phones]
    known = harvest_names(todo) | {n.strip() for n in names or () if n.strip()}
    fakes = Pseudonyms(salt=lake_salt(ctx.lake), detector=Detector(names=known))
    pixels = Pixels(ctx, fakes.detector)
    out = []
    for e in ws:
        if e.phone not in phones:
            out.append(e)
            continue
        out.append(_redact_episode(e, pixels, fakes, blur, ocr, note))
        if ctx.progress:
            ctx.progress("redacting", len(out), len(todo))
    ctx.details["redactions"] = dict(sorted(totals.items()))
    ctx.details["redaction_records"] = records
    ctx.details["redacted_phones"] = sorted(phones)
    ctx.details["blur"] = blur
    ctx.details["ocr"] = {"mode": ocr, **pixels.stats}
    ctx.details["scanned_episodes"] = sorted(e.episode_id for e in todo)
    return out


def harvest_names(episodes: list[EpisodeRow]) -> set[str]:
    """Every person name the rules find in the episodes' texts and trees: a name seen in
    one place ("Call Priya Raman" in a contact row) is then found alone elsewhere
    ("Priya" on a chat screen), in text and in pixels."""
    detector, found = Detector(), set()
    for e in episodes:
        texts = [e.instruction, json.dumps(e.meta, ensure_ascii=False)]
        for s in e.steps:
            texts += [s.action_json, s.thought, s.raw_output]
            if s.ui_tree:
                texts += re.findall(r'(?:text|content-desc|hint)="([^"]+)"', s.ui_tree)
        for text in texts:
            for span in detector.find(text):
                if span.kind == "NAME":
                    value = text[span.start:span.end]
                    found.add(value)
                    if " " in value:  # the given name and the surname alone too
                        found.update(part for part in value.split() if len(part) > 2 and not part.endswith("."))
    return found


def _redact_episode(e: EpisodeRow, pixels, fakes: Pseudonyms, blur: bool, ocr: str, note) -> EpisodeRow:
    instruction, kinds = fakes.replace(e.instruction)
    note(e.episode_id, None, "instruction", kinds)
    meta, kinds = _redact_value(e.meta, fakes)
    note(e.episode_id, None, "meta", kinds)
    fields = {}
    for field in EPISODE_TEXT:
        fields[field], kinds = _redact_value(getattr(e, field), fakes)
        note(e.episode_id, None, field, kinds)
    done: dict[int, StepRow] = {}

    def one(s: StepRow) -> StepRow:
        if id(s) not in done:
            done[id(s)] = _redact_step(e.episode_id, s, pixels, fakes, blur, ocr, note)
        return done[id(s)]

    trajectory = tuple(one(s) for s in e.trajectory)
    steps = [one(s) for s in e.steps]
    return replace(e, instruction=instruction, meta=meta, steps=steps, trajectory=trajectory,
                   unredacted=e.unredacted or e, **fields)


def _redact_value(value, fakes: Pseudonyms):
    """Strings anywhere in a JSON-like value, pseudonymised; returns (value, kinds)."""
    if isinstance(value, str):
        return fakes.replace(value)
    if isinstance(value, dict):
        kinds, out = [], {}
        for k, v in value.items():
            out[k], found = _redact_value(v, fakes)
            kinds += found
        return out, kinds
    if isinstance(value, list):
        pairs = [_redact_value(v, fakes) for v in value]
        return [v for v, _ in pairs], [k for _, found in pairs for k in found]
    return value, []


def _redact_step(episode_id: str, s: StepRow, pixels, fakes: Pseudonyms, blur: bool, ocr: str,
                 note) -> StepRow:
    changes: dict = {}
    for field in STEP_TEXT:
        new, kinds = fakes.replace(getattr(s, field))
        if kinds:
            changes[field] = new
            note(episode_id, s.index, field, kinds)
    meta, kinds = _redact_value(s.meta, fakes)
    if kinds:
        changes["meta"] = meta
        note(episode_id, s.index, "step_meta", kinds)
    if s.action is not None:
        data, kinds = _redact_value(s.action.to_dict(), fakes)
        if kinds:
            action = Action.from_dict(data)
            changes.update(action=action, action_json=action.to_json())
            note(episode_id, s.index, "action", kinds)
    else:
        new, kinds = fakes.replace(s.action_json)
        if kinds:
            changes.update(action_json=new, action=parse_action(new))
            note(episode_id, s.index, "action", kinds)
    boxes: list[Box] = []
    covered: list[Box] = []
    tree_ok = False
    if s.ui_tree:
        try:
            tree, boxes, covered, kinds = _redact_tree(s.ui_tree, fakes)
            tree_ok = True
        except ET.ParseError:
            tree, boxes, kinds = _redact_text_tree(s.ui_tree, fakes)
        if kinds:
            changes["ui_tree"] = tree
            note(episode_id, s.index, "ui_tree", kinds)
    if s.image is not None or ocr == "every" or (ocr == "no_tree" and not tree_ok) or (blur and boxes):
        key = s.frame_sha if s.image is None else f"replaced:{hash(s.image)}"
        if ocr == "every" or (ocr == "no_tree" and not tree_ok):
            found = pixels.suspicious_lines(key, s, covered)
            if found:
                note(episode_id, s.index, "screenshot_ocr", ["TEXT"] * len(found))
            boxes += found
        if blur and boxes:
            changes["image"] = pixels.blurred(key, s, boxes)
            note(episode_id, s.index, "screenshot_blur", ["REGION"] * len(boxes))
    return replace(s, **changes) if changes else s


Box = tuple[int, int, int, int]


class Pixels:
    """Frames decoded, OCR'd and blurred once per distinct frame (by sha) for one op run."""

    def __init__(self, ctx: Context, detector: Detector) -> None:
        self.ctx, self.detector = ctx, detector
        self._pixels: dict[str, np.ndarray] = {}
        self._lines: dict[tuple, list[Box]] = {}
        self._blurred: dict[tuple, bytes] = {}
        self._scratch: np.ndarray | None = None  # reused by every blur (encoded to PNG bytes at once)
        self.stats = {"frames_read": 0, "lines_found": 0, "lines_recognised": 0, "lines_covered_by_tree": 0,
                      "lines_too_short": 0}

    def pixels(self, key: str, s: StepRow) -> np.ndarray:
        if key not in self._pixels:
            if len(self._pixels) > 64:  # frames of one episode are near each other: keep a window
                self._pixels.pop(next(iter(self._pixels)))
            self._pixels[key] = ocr_engine.decode(s.image if s.image is not None else self.ctx.frame(s.frame_sha))
        return self._pixels[key]

    def suspicious_lines(self, key: str, s: StepRow, covered: list[Box]) -> list[Box]:
        """Text lines to blur: detected PII, an "@" or a run of >= 5 digits."""
        cache = (key, tuple(covered))
        if cache not in self._lines:
            px = self.pixels(key, s)
            lines = ocr_engine.text_regions(px)
            todo = [b for b in lines if not _covered(ocr_engine.ink(b), covered)]
            self.stats["frames_read"] += 1
            self.stats["lines_found"] += len(lines)
            self.stats["lines_covered_by_tree"] += len(lines) - len(todo)
            short = [b for b in todo if _aspect(ocr_engine.ink(b)) < MIN_READ_ASPECT]
            todo = [b for b in todo if b not in short]
            self.stats["lines_too_short"] += len(short)
            self.stats["lines_recognised"] += len(todo)
            texts = ocr_engine.recognise(px, todo)
            self._lines[cache] = [b for b, text in zip(todo, texts) if self.suspicious(text)]
        return list(self._lines[cache])

    def suspicious(self, text: str) -> bool:
        """An OCR line to blur: PII found, or what OCR may have garbled from it."""
        return bool(self.detector.find(text)) or "@" in text or bool(_DIGIT_RUN.search(text))

    def blurred(self, key: str, s: StepRow, boxes: list[Box]) -> bytes:
        cache = (key, tuple(sorted(set(boxes))))
        if cache not in self._blurred:
            px = self.pixels(key, s)
            if self._scratch is None or self._scratch.shape != px.shape:
                self._scratch = np.empty_like(px)
            self._blurred[cache] = blur_pixels(px, boxes, self._scratch)
        return self._blurred[cache]


def _covered(box: Box, nodes: list[Box]) -> bool:
    """At least 90% of ``box`` lies within the union of ``nodes`` (each widened by
    ``COVER_SLACK_PX``): a line may span two text nodes (a label and its value) and is
    covered when both are."""
    x1, y1, x2, y2 = box
    mask = np.zeros((max(1, y2 - y1), max(1, x2 - x1)), dtype=bool)
    for nx1, ny1, nx2, ny2 in nodes:
        a, b = max(x1, nx1 - COVER_SLACK_PX), min(x2, nx2 + COVER_SLACK_PX)
        c, d = max(y1, ny1 - COVER_SLACK_PX), min(y2, ny2 + COVER_SLACK_PX)
        if a < b and c < d:
            mask[c - y1:d - y1, a - x1:b - x1] = True
    return mask.mean() >= 0.9


def _aspect(box: Box) -> float:
    return (box[2] - box[0]) / max(1, box[3] - box[1])


def _redact_tree(xml: str, fakes: Pseudonyms):
    """(tree, boxes of nodes that held PII, boxes of leaf text nodes, kinds)."""
    root = ET.fromstring(xml)
    boxes, covered, kinds = [], [], []
    for node in root.iter():
        hit = False
        for attr, value in list(node.attrib.items()):
            if attr == "bounds":
                continue
            new, found = fakes.replace(value)
            if found:
                node.set(attr, new)
                kinds += found
                hit = True
        if node.text and node.text.strip():
            node.text, found = fakes.replace(node.text)
            kinds += found
            hit = hit or bool(found)
        bounds = _bounds(node)
        if bounds is None:
            continue
        if hit:
            boxes.append(bounds)
        has_text = any((node.get(a) or "").strip() for a in ("text", "content-desc", "hint"))
        if has_text and len(node) == 0 and bounds[3] - bounds[1] <= COVERING_NODE_MAX_PX:
            covered.append(bounds)
    if not kinds:
        return xml, [], covered, kinds
    return ET.tostring(root, encoding="unicode"), boxes, covered, kinds


def _bounds(node) -> Box | None:
    if not node.get("bounds"):
        return None
    try:
        return parse_bounds(node.get("bounds"))
    except ValueError:
        return None


def _redact_text_tree(xml: str, fakes: Pseudonyms):
    """A tree that does not parse is still text: pseudonymise it as such (no boxes)."""
    new, kinds = fakes.replace(xml)
    return new, [], kinds


def blur_pixels(pixels: np.ndarray, boxes: list[Box], scratch: np.ndarray | None = None) -> bytes:
    """A PNG of ``pixels`` with each box made unreadable: averaged down to a few pixels,
    blurred there and scaled back up (only the boxes are touched; the PNG is written by the
    fast encoder). ``scratch``: an array of the same shape to work in (a fresh 8 MB copy per
    frame costs more in page faults than the blur)."""
    if scratch is not None and scratch.shape == pixels.shape and scratch.dtype == pixels.dtype:
        np.copyto(scratch, pixels)
        out = scratch
    else:
        out = pixels.copy()
    h, w = out.shape[:2]
    for x1, y1, x2, y2 in boxes:
        x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
        if x2 <= x1 or y2 <= y1:
            continue
        region = Image.fromarray(out[y1:y2, x1:x2])
        small = region.resize((max(1, (x2 - x1) // 16), max(1, (y2 - y1) // 16)), Image.Resampling.BOX)
        # the blur of radius max(4, height / 2), applied at the 1/16 scale (the same smear,
        # ~250x fewer pixels), then scaled back up
        small = small.filter(ImageFilter.GaussianBlur(radius=max(4, (y2 - y1) // 2) / 16))
        out[y1:y2, x1:x2] = np.asarray(small.resize(region.size, Image.Resampling.BILINEAR))
    return encode_png(out)


def blur_boxes(png: bytes, boxes: list[Box]) -> bytes:
    """The PNG with each box made unreadable (see ``blur_pixels``)."""
    return blur_pixels(ocr_engine.decode(png), boxes)


def redaction_summary(records: list[dict]) -> str:
    """JSON lines for ``redactions.jsonl``."""
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
