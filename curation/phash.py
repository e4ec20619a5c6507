"""64-bit DCT perceptual hashes of PNG screenshots, fast enough for millions of frames.

Algorithm (``phash``), the construction of ``imagehash.phash``:

1. Decode the PNG: pyspng when it is importable and the PNG is plain 8-bit gray, RGB,
   RGBA or palette; Pillow otherwise (and whenever pyspng refuses the data).
2. Grayscale by ITU-R 601-2 luma (``L = 0.299 R + 0.587 G + 0.114 B``, Pillow's
   ``convert("L")``; alpha is ignored).
3. Downsample to 32x32 in two steps: area-average by the largest integer factor that
   keeps the image at least 4x the target size (Pillow's ``reduce``), then Lanczos.
4. 2-D DCT-II of the 32x32 block with a precomputed cosine matrix, keeping only the
   top-left 8x8 low-frequency coefficients: ``C8 @ X @ C8.T``.
5. Bit = coefficient > median of the 64 coefficients, row-major, first bit = most
   significant, packed into an unsigned 64-bit integer.

The only difference from ``imagehash.phash`` is step 3: imagehash runs Lanczos on the
full-size image, which costs about as much as the decode (~20 ms at 1080x2400, against
<1 ms here). Hashes are therefore close to imagehash's but not bit-identical: about 1
bit apart on average on varied synthetic screens (tests/curation/test_phash.py), ~4.5 on
near-blank ones (bench/curation_bench.py), whose low frequencies are tiny and close to
their median. The bit order matches ``int(str(h), 16)`` of an ``imagehash.ImageHash``,
so the two can be compared bit for bit.

Near-blank UI screens are sensitive in any phash: a status-bar clock change can move a
hash by 10+ bits, while two list screens that differ only in their text can hash
identically. Pick dedup thresholds on real frames.

``phash_many`` hashes a batch in order, in a ``spawn`` process pool when the batch is
large (the lake's writer must never run in a forked child), in-process otherwise.
"""

from __future__ import annotations

import itertools
import os
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from io import BytesIO
from multiprocessing import get_context

import numpy as np
from PIL import Image, UnidentifiedImageError

try:  # optional: ~2x faster PNG decode than Pillow
    import pyspng
except ImportError:  # pragma: no cover - depends on the environment
    pyspng = None

__all__ = ["PHashError", "phash", "phash_many", "hamming", "hamming_many"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HASH_SIZE = 8  # 8x8 low-frequency block -> 64 bits
DCT_SIZE = 32  # the image is reduced to DCT_SIZE x DCT_SIZE before the DCT
REDUCING_GAP = 4.0  # step 3: box-reduce while the image stays >= 4x DCT_SIZE, then Lanczos
SERIAL_MAX = 64  # batches up to this size are hashed in-process (a spawn pool costs ~0.5 s)
CHUNK = 32  # PNGs per task sent to a worker (~4 MB of 135 KB screenshots)
_SPNG_COLOR_TYPES = {0, 2, 3, 6}  # gray, RGB, palette, RGBA; pyspng mishandles gray+alpha and 16-bit


class PHashError(ValueError):
    """A PNG could not be hashed (not a PNG, truncated or corrupt)."""


def _dct_rows() -> np.ndarray:
    """The first HASH_SIZE rows of the (unnormalised) DCT-II matrix of size DCT_SIZE.

    ``C[k, n] = cos(pi * k * (2n + 1) / (2N))``. scipy's unnormalised DCT-II is twice
    this; a uniform scale does not change which coefficients exceed the median.
    """
    k = np.arange(HASH_SIZE)[:, None]
    n = np.arange(DCT_SIZE)[None, :]
    return np.cos(np.pi * k * (2 * n + 1) / (2 * DCT_SIZE))


_C8 = _dct_rows()


def _png_header(png: bytes) -> tuple[int, int]:
    """(bit depth, colour type) from the IHDR chunk; PHashError if ``png`` is not a PNG."""
    if not isinstance(png, (bytes, bytearray, memoryview)):
        raise TypeError(f"phash expects PNG bytes, got {type(png).__name__}")
    head = bytes(png[:29])
    if head[:8] != PNG_SIGNATURE:
        raise PHashError(f"not a PNG: the data ({len(png)} bytes) does not start with the PNG signature")
    if len(head) < 29 or head[12:16] != b"IHDR":
        raise PHashError(f"corrupt PNG: no IHDR chunk after the signature ({len(png)} bytes)")
    _, _, depth, color = struct.unpack(">IIBB", head[16:26])
    return depth, color


def _decode_gray(png: bytes) -> Image.Image:
    """The PNG as an 8-bit grayscale Pillow image (mode ``L``)."""
    depth, color = _png_header(png)
    if pyspng is not None and depth <= 8 and color in _SPNG_COLOR_TYPES:
        try:
            pixels = pyspng.load(bytes(png))
        except RuntimeError:
            pass  # let Pillow decide, and word the error, so results never depend on pyspng
        else:
            mode = {1: "L", 3: "RGB", 4: "RGBA"}[1 if pixels.ndim == 2 else pixels.shape[2]]
            image = Image.fromarray(pixels, mode)
            # Free the decode buffer before convert allocates: with both alive, glibc trims
            # and re-faults the heap on every frame (~10 ms of system time per 1080x2400).
            del pixels
            return image if mode == "L" else image.convert("L")
    try:
        with Image.open(BytesIO(png), formats=["PNG"]) as image:
            image.load()
            if image.mode in ("I;16", "I;16B", "I"):  # 16-bit gray: Pillow's "L" would clip at 255
                return Image.fromarray((np.asarray(image, dtype=np.uint32) >> 8).astype(np.uint8), "L")
            return image.convert("L")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise PHashError(f"corrupt PNG ({len(png)} bytes): {exc}") from exc


def _hash_gray(gray: Image.Image) -> int:
    """Steps 3-5 of the module docstring on a mode-``L`` image."""
    small = gray.resize((DCT_SIZE, DCT_SIZE), Image.Resampling.LANCZOS, reducing_gap=REDUCING_GAP)
    small = np.asarray(small, dtype=np.float64)
    low = _C8 @ small @ _C8.T
    bits = low > np.median(low)
    return int.from_bytes(np.packbits(bits.ravel()).tobytes(), "big")


def phash(png: bytes) -> int:
    """The 64-bit perceptual hash of one PNG (see the module docstring for the algorithm).

    >>> phash(open("frame.png", "rb").read())  # doctest: +SKIP
    17361125484128292291

    Raises PHashError (a ValueError) when the data is not a decodable PNG.
    """
    return _hash_gray(_decode_gray(png))


def _phash_chunk(pngs: list[bytes], start: int) -> np.ndarray:
    """Worker task: the hashes of one chunk (input positions start, start + 1, ...) as uint64."""
    out = np.empty(len(pngs), dtype=np.uint64)
    for i, png in enumerate(pngs):
        try:
            out[i] = phash(png)
        except PHashError as exc:
            raise PHashError(f"PNG at index {start + i}: {exc}") from None
    return out


def _default_workers() -> int:
    """CPUs this process may run on (os.cpu_count() where affinity is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _chunks(items: Iterable[bytes], size: int) -> Iterator[tuple[list[bytes], int]]:
    """(chunk, index of its first item) for consecutive chunks of ``size`` items."""
    it, start = iter(items), 0
    while chunk := list(itertools.islice(it, size)):
        yield chunk, start
        start += len(chunk)


def phash_many(
    pngs: Sequence[bytes] | Iterable[bytes],
    workers: int = 0,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """The hashes of many PNGs, in input order, as a uint64 array.

    ``workers=0`` uses every CPU this process may run on; ``workers=1`` hashes in-process.
    Batches of at most SERIAL_MAX PNGs are always hashed in-process. Larger ones go to a
    ``spawn`` process pool in chunks of CHUNK PNGs, with at most 4 chunks per worker in
    flight, so an iterator (e.g. frames streamed from the lake) is consumed lazily.
    ``progress(n_done)`` is called after each chunk with the number of PNGs hashed so far.
    The first undecodable PNG raises PHashError.
    """
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    workers = workers or _default_workers()
    it = iter(pngs)
    head = list(itertools.islice(it, SERIAL_MAX + 1))
    if workers == 1 or len(head) <= SERIAL_MAX:
        chunks = _chunks(itertools.chain(head, it), CHUNK)
        return _collect((_phash_chunk(c, start) for c, start in chunks), progress)
    return _collect(_pool_map(_chunks(itertools.chain(head, it), CHUNK), workers), progress)


def _pool_map(chunks: Iterator[tuple[list[bytes], int]], workers: int) -> Iterator[np.ndarray]:
    """Chunk results in order from a spawn pool, keeping a bounded window in flight."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"))
    try:
        window: deque = deque()
        for chunk, start in chunks:
            window.append(pool.submit(_phash_chunk, chunk, start))
            if len(window) >= 4 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # on error: drop the chunks not yet started


def _collect(results: Iterable[np.ndarray], progress: Callable[[int], None] | None) -> np.ndarray:
    parts, done = [], 0
    for part in results:
        parts.append(part)
        done += len(part)
        if progress is not None:
            progress(done)
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two 64-bit hashes."""
    return (int(a) ^ int(b)).bit_count()


def hamming_many(hashes: np.ndarray, h: int) -> np.ndarray:
    """Hamming distance from ``h`` to each of ``hashes`` (uint64), as a uint8 array."""
    hashes = np.asarray(hashes)
    if hashes.dtype != np.uint64:
        raise TypeError(f"hashes must be a uint64 array, got {hashes.dtype}")
    return np.bitwise_count(hashes ^ np.uint64(h))
