"""Text on a screenshot, found by OCR, fast enough to read every screen.

Two stages, so that the expensive one runs only where it is needed:

1. ``text_regions``: text lines found without a model. UI text is glyph edges on a
   flat background: the frame (decoded once with pyspng) is reduced to grey, strong
   horizontal and vertical steps are marked, marks are joined along each row (letters
   into words into lines) and the connected components that are line-shaped are the
   regions. Borders, dividers and photos are not line-shaped and are left out.
2. ``recognise``: each region the caller still needs (``curation.ops.redact`` drops the
   ones inside a UI-tree node whose text it already scanned) is cut out and read by the
   recognition model of ``rapidocr`` 3 (PaddleOCR's PP-OCR, ONNX, inside the wheel:
   nothing is downloaded at run time), each crop at its own width (``read_lines``), crops
   of similar width in one batch.

``text_boxes`` / ``read_text`` run rapidocr's own detector and recogniser on the whole
image (~100x slower): tests and audits use them to read outputs back independently of
stage 1. The engine is loaded once per process, on first use (~2 s).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from io import BytesIO

import numpy as np
from PIL import Image

Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in image pixels
STEP = 90  # grey-level step (0..765, summed RGB) between neighbouring pixels that marks a glyph edge
MIN_LINE_PX, MAX_LINE_PX = 6, 140  # text line heights considered, in full-resolution pixels
JOIN_PX = 12  # how far (full-resolution px) marks are joined sideways: a region is this much wider than its ink


@lru_cache(maxsize=1)
def _engine():
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "warning"})  # it logs every model file at INFO


def decode(png: bytes) -> np.ndarray:
    """(height, width, 3) uint8 RGB."""
    import pyspng

    pixels = pyspng.load(png)
    if pixels.ndim == 2:
        pixels = np.repeat(pixels[:, :, None], 3, axis=2)
    return pixels[:, :, :3]


def text_regions(pixels: np.ndarray) -> list[Box]:
    """Boxes of the text lines drawn on ``pixels`` (see the module docstring)."""
    from scipy import ndimage

    h, w = pixels.shape[:2]
    scale = 2 if w >= 720 else 1
    grey = _grey(pixels, scale)
    across = np.zeros(grey.shape, dtype=bool)  # steps along a row: the vertical strokes of glyphs
    across[:, 1:] = np.abs(np.diff(grey, axis=1)) > STEP
    edges = across.copy()
    edges[1:, :] |= np.abs(np.diff(grey, axis=0)) > STEP
    gap = max(3, JOIN_PX // scale)  # letters and words closer than this join into one line
    joined = ndimage.maximum_filter1d(edges.view(np.uint8), size=2 * gap + 1, axis=1).astype(bool)
    labels, _ = ndimage.label(joined)
    out = []
    for sl in ndimage.find_objects(labels):
        if sl is None:
            continue
        y1, y2, x1, x2 = sl[0].start * scale, sl[0].stop * scale, sl[1].start * scale, sl[1].stop * scale
        bh, bw = y2 - y1, x2 - x1
        if not MIN_LINE_PX <= bh <= MAX_LINE_PX or bw < bh * 0.6:
            continue
        density, strokes = edges[sl].mean(), across[sl].mean()
        if density < 0.04 or density > 0.6 or strokes < 0.02:  # a bar or a lone stroke, or a photo's noise
            continue
        pad = max(2, bh // 6)
        out.append((max(0, x1 - pad), max(0, y1 - pad), min(w, x2 + pad), min(h, y2 + pad)))
    return out


def ink(box: Box) -> Box:
    """The glyphs' own extent inside a region from ``text_regions`` (which is padded by a
    sixth of the line's height and widened by the sideways join): for comparing a line with
    UI-tree bounds and for telling a lone glyph from a word."""
    x1, y1, x2, y2 = box
    pad = max(2, (y2 - y1) // 8)
    side = JOIN_PX + pad
    return (x1 + side, y1 + pad, max(x1 + side + 1, x2 - side), max(y1 + pad + 1, y2 - pad))


def _grey(pixels: np.ndarray, scale: int) -> np.ndarray:
    """R+G+B (0..765) of every ``scale``-th pixel of every ``scale``-th row."""
    if pixels.flags.c_contiguous:  # one strided pass over the bytes of the kept rows
        rows = pixels.reshape(pixels.shape[0], -1)[::scale]
        step = 3 * scale
        return rows[:, 0::step].astype(np.int16) + rows[:, 1::step] + rows[:, 2::step]
    sub = pixels[::scale, ::scale]
    return sub[:, :, 0].astype(np.int16) + sub[:, :, 1] + sub[:, :, 2]


_READ: dict[bytes, str] = {}  # crop digest -> text: status bars, avatars and headers repeat across frames
REC_H = 48  # the recognition model's input height
BUCKET_W = 64  # crops are batched with others whose scaled width rounds up to the same multiple of this


def recognise(pixels: np.ndarray, boxes: list[Box]) -> list[str]:
    """The text in each box; crops already read in this process (same pixels) are not read
    again, the rest go to the model at their own width (see ``read_lines``)."""
    if not boxes:
        return []
    crops = [np.ascontiguousarray(pixels[y1:y2, x1:x2]) for x1, y1, x2, y2 in boxes]
    keys = [hashlib.blake2b(c.tobytes(), digest_size=16, person=bytes(str(c.shape), "ascii")[:16]).digest()
            for c in crops]
    todo = {k: c for k, c in zip(keys, crops) if k not in _READ}
    if todo:
        if len(_READ) > 200_000:
            _READ.clear()
        _READ.update(zip(todo, read_lines(list(todo.values()))))
    return [_READ[k] for k in keys]


def read_lines(crops: list[np.ndarray]) -> list[str]:
    """Each crop's text, read by rapidocr's recognition model (PP-OCR rec, CTC).

    rapidocr pads every line to at least 320 px wide at 48 px high, so a short crop (a
    name, a clock, a button) costs as much as a long one, and the model's cost grows with
    the width. Here each crop is scaled to 48 px high and padded only to the next multiple
    of ``BUCKET_W``; crops of one width bucket go in one batch, and the output is decoded
    greedily (repeats collapsed, blanks dropped) as rapidocr does."""
    rec = _engine()._load_rec_model()
    scaled = [_scaled(c) for c in crops]
    buckets: dict[int, list[int]] = {}
    for i, img in enumerate(scaled):
        buckets.setdefault(-(-img.shape[2] // BUCKET_W) * BUCKET_W, []).append(i)
    out = [""] * len(crops)
    for width, members in sorted(buckets.items()):
        for start in range(0, len(members), 8):
            batch = members[start:start + 8]
            inputs = np.zeros((len(batch), 3, REC_H, width), dtype=np.float32)
            for row, i in enumerate(batch):
                inputs[row, :, :, :scaled[i].shape[2]] = scaled[i]
            steps = rec.session(inputs).argmax(axis=2)
            for row, i in enumerate(batch):
                out[i] = _ctc(steps[row], rec.postprocess_op.character)
    return out


def _scaled(crop: np.ndarray) -> np.ndarray:
    """(3, 48, w) float32 in [-1, 1], as rapidocr normalises a line."""
    h, w = crop.shape[:2]
    width = max(1, int(np.ceil(REC_H * w / max(1, h))))
    img = np.asarray(Image.fromarray(crop).resize((width, REC_H), Image.Resampling.BILINEAR), dtype=np.float32)
    return (img.transpose(2, 0, 1) / 127.5) - 1.0


def _ctc(steps: np.ndarray, characters: list[str]) -> str:
    """Greedy CTC decoding: repeats collapsed, blanks (index 0) dropped."""
    keep = np.ones(len(steps), dtype=bool)
    keep[1:] = steps[1:] != steps[:-1]
    return "".join(characters[k] for k in steps[keep & (steps != 0)])


def text_boxes(png: bytes) -> list[tuple[Box, str]]:
    """Every line of text rapidocr's full pipeline finds in the image, with its bounding
    box (padded by 2 px). Cached per image for the life of the process."""
    return list(_text_boxes(png))


@lru_cache(maxsize=8192)
def _text_boxes(png: bytes) -> tuple[tuple[Box, str], ...]:
    img = Image.open(BytesIO(png)).convert("RGB")
    result = _engine()(np.asarray(img))
    out = []
    quads = result.boxes.tolist() if result.boxes is not None else []
    for quad, text in zip(quads, result.txts or ()):
        xs, ys = [p[0] for p in quad], [p[1] for p in quad]
        box = (max(0, int(min(xs)) - 2), max(0, int(min(ys)) - 2),
               min(img.width, int(max(xs)) + 3), min(img.height, int(max(ys)) + 3))
        out.append((box, text))
    return tuple(out)


def read_text(png: bytes) -> str:
    """All text OCR finds, one line per box (for tests and audits)."""
    return "\n".join(text for _, text in text_boxes(png))
