"""Text on a screenshot, found by OCR: for redacting screens that come without a UI tree.

Uses ``rapidocr`` 3 with onnxruntime (PaddleOCR's PP-OCR detection and recognition
models in ONNX, shipped inside the wheel: nothing is downloaded at run time). The engine is loaded
once per process, on first use (~2 s).
"""

from __future__ import annotations

from functools import lru_cache
from io import BytesIO

import numpy as np
from PIL import Image

Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in image pixels


@lru_cache(maxsize=1)
def _engine():
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "warning"})  # it logs every model file at INFO


def text_boxes(png: bytes) -> list[tuple[Box, str]]:
    """Every line of text OCR finds in the image, with its bounding box (padded by 2 px).
    Results are cached per image for the life of the process (a frame is read once)."""
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
