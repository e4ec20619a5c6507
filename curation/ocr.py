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
   nothing is downloaded at run time), all of a frame's lines in one batch.

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
    gap = max(3, 12 // scale)  # letters and words closer than this join into one line
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


def _grey(pixels: np.ndarray, scale: int) -> np.ndarray:
    """R+G+B (0..765) of every ``scale``-th pixel of every ``scale``-th row."""
    if pixels.flags.c_contiguous:  # one strided pass over the bytes of the kept rows
        rows = pixels.reshape(pixels.shape[0], -1)[::scale]
        step = 3 * scale
        return rows[:, 0::step].astype(np.int16) + rows[:, 1::step] + rows[:, 2::step]
    sub = pixels[::scale, ::scale]
    return sub[:, :, 0].astype(np.int16) + sub[:, :, 1] + sub[:, :, 2]


_READ: dict[bytes, str] = {}  # crop digest -> text: status bars, avatars and headers repeat across frames


def recognise(pixels: np.ndarray, boxes: list[Box]) -> list[str]:
    """The text in each box; crops already read in this process (same pixels) are not read
    again, the rest go to the model in one batch."""
    if not boxes:
        return []
    crops = [np.ascontiguousarray(pixels[y1:y2, x1:x2]) for x1, y1, x2, y2 in boxes]
    keys = [hashlib.blake2b(c.tobytes(), digest_size=16, person=bytes(str(c.shape), "ascii")[:16]).digest()
            for c in crops]
    todo = {k: c for k, c in zip(keys, crops) if k not in _READ}
    if todo:
        if len(_READ) > 200_000:
            _READ.clear()
        _READ.update(zip(todo, _engine().recognize_txt(list(todo.values())).txts))
    return [_READ[k] for k in keys]


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
