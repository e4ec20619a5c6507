import random
from io import BytesIO

import imagehash
import numpy as np
import pytest
from PIL import Image, ImageDraw

import curation.phash as ph
from curation.phash import PHashError, hamming, hamming_many, phash, phash_many

W, H = 270, 600  # a quarter-size 1080x2400 screen: same aspect, faster tests
LAYOUTS = ("list", "grid", "chat", "form", "photo", "keyboard")


def screen_image(seed: int, layout: str | None = None) -> Image.Image:
    """A UI-like screen: status bar, app bar and a layout-dependent body, all from ``seed``."""
    rng = random.Random(seed)
    layout = layout or LAYOUTS[seed % len(LAYOUTS)]
    accent = tuple(rng.randrange(256) for _ in range(3))
    img = Image.new("RGB", (W, H), (250, 250, 250) if rng.random() < 0.7 else (32, 33, 36))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, W, 20], fill=(20, 20, 20))
    d.rectangle([0, 20, W, 20 + rng.randrange(40, 90)], fill=accent)
    d.text((12, 40), f"Screen {seed}", fill="white")
    if layout == "list":
        for row in range(rng.randrange(5, 10)):
            y = 120 + row * 50
            d.rounded_rectangle([10, y, W - 10, y + 40], radius=8, fill="white", outline=(200, 200, 200))
            d.text((20, y + 14), f"Item {rng.randrange(1000)}", fill=(30, 30, 30))
    elif layout == "grid":
        for k in range(12):
            x, y = 15 + (k % 3) * 85, 130 + (k // 3) * 110
            d.rectangle([x, y, x + 70, y + 90], fill=tuple(rng.randrange(256) for _ in range(3)))
    elif layout == "chat":
        for k in range(8):
            left = rng.random() < 0.5
            y, w = 120 + k * 55, rng.randrange(80, 200)
            box = [10, y, 10 + w, y + 40] if left else [W - 10 - w, y, W - 10, y + 40]
            d.rounded_rectangle(box, radius=14, fill=(230, 230, 230) if left else accent)
    elif layout == "form":
        for k in range(6):
            y = 130 + k * 70
            d.text((20, y), f"Field {k}", fill=(90, 90, 90))
            d.rectangle([20, y + 18, W - 20, y + 50], outline=(120, 120, 120), width=2)
        d.rounded_rectangle([40, 540, W - 40, 580], radius=20, fill=accent)
    elif layout == "photo":
        photo = np.random.default_rng(seed).integers(0, 255, size=(260, W, 3), dtype=np.uint8)
        img.paste(Image.fromarray(photo), (0, 150))
    else:  # keyboard
        d.rectangle([0, 380, W, H], fill=(210, 213, 219))
        for k in range(30):
            x, y = 4 + (k % 10) * 26, 390 + (k // 10) * 50
            d.rounded_rectangle([x, y, x + 22, y + 40], radius=4, fill="white")
    return img


def encode(img: Image.Image) -> bytes:
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def screen(seed: int, layout: str | None = None) -> bytes:
    return encode(screen_image(seed, layout))


def imagehash_int(png: bytes) -> int:
    return int(str(imagehash.phash(Image.open(BytesIO(png)))), 16)


def test_identical_pngs_hash_equal():
    assert phash(screen(1)) == phash(screen(1))


def test_hash_is_an_unsigned_64_bit_int_with_both_bit_values():
    h = phash(screen(2))
    assert isinstance(h, int) and 0 < h < 2**64 - 1


@pytest.mark.parametrize("seed", range(12))
def test_a_few_changed_pixels_stay_within_2_bits(seed):
    img = screen_image(seed)
    changed = img.copy()
    for x in range(5):
        changed.putpixel((100 + x, 300), (255, 0, 0))
    assert hamming(phash(encode(img)), phash(encode(changed))) <= 2


@pytest.mark.parametrize("seed", range(12))
def test_title_text_moved_by_a_pixel_stays_within_8_bits(seed):
    img = screen_image(seed)
    moved = img.copy()
    ImageDraw.Draw(moved).text((13, 41), f"Screen {seed}", fill="white")  # drawn at (12, 40) before
    assert hamming(phash(encode(img)), phash(encode(moved))) <= 8


def test_different_screens_are_far_apart():
    hashes = [phash(screen(seed, layout)) for seed, layout in enumerate(LAYOUTS)]
    distances = [hamming(a, b) for i, a in enumerate(hashes) for b in hashes[i + 1:]]
    assert min(distances) >= 12


def test_hashes_are_close_to_imagehash_phash():
    """Same construction, area-averaging instead of Lanczos: close, not bit-identical."""
    pngs = [screen(seed) for seed in range(24)]
    distances = np.array([hamming(phash(p), imagehash_int(p)) for p in pngs])
    assert distances.mean() <= 2  # 1.0 bit over 60 such screens; a wrong bit order gives ~32
    assert (distances == 0).any()


def test_flipped_image_is_far_from_the_original():
    img = screen_image(3)
    assert hamming(phash(encode(img)), phash(encode(img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)))) >= 12


@pytest.mark.parametrize("mode", ["L", "P", "RGBA", "1", "LA", "I;16"])
def test_pixel_formats_hash_like_their_rgb_screen(mode):
    img = screen_image(4, "form")
    converted = img.convert(mode) if mode != "I;16" else Image.fromarray(
        np.asarray(img.convert("L"), dtype=np.uint16) * 257)
    assert hamming(phash(encode(converted)), phash(encode(img))) <= 8


@pytest.mark.parametrize("mode", ["RGB", "L", "P", "RGBA"])
def test_pyspng_and_pillow_decodes_give_the_same_hash(monkeypatch, mode):
    png = encode(screen_image(5).convert(mode))
    fast = phash(png)
    monkeypatch.setattr(ph, "pyspng", None)
    assert phash(png) == fast


def _truncated() -> bytes:
    return screen(6)[:2000]


def _bad_crc() -> bytes:
    data = bytearray(screen(6))
    data[60] ^= 0xFF  # inside the first IDAT chunk
    return bytes(data)


@pytest.mark.parametrize("data, message", [
    (b"", "not a PNG"),
    (b"GIF89a not a png", "not a PNG"),
    (encode(Image.new("RGB", (8, 8))).replace(b"IHDR", b"IHDX"), "no IHDR"),
    (_truncated(), "corrupt PNG"),
    (_bad_crc(), "corrupt PNG"),
])
def test_undecodable_data_raises_phash_error_naming_the_problem(data, message):
    with pytest.raises(PHashError, match=message) as info:
        phash(data)
    assert isinstance(info.value, ValueError)


def test_non_bytes_input_is_a_type_error():
    with pytest.raises(TypeError, match="PNG bytes"):
        phash("frame.png")


def test_phash_many_small_batch_matches_serial_hashes_in_order():
    pngs = [screen(seed) for seed in range(10)]
    out = phash_many(pngs)
    assert out.dtype == np.uint64
    assert out.tolist() == [phash(p) for p in pngs]


def test_phash_many_spawn_pool_preserves_order_and_reports_progress(monkeypatch):
    pngs = [screen(seed % 7) for seed in range(23)]  # repeats: order errors would not hide
    pngs[5] = screen(99, "photo")
    monkeypatch.setattr(ph, "SERIAL_MAX", 4)
    monkeypatch.setattr(ph, "CHUNK", 3)
    pooled = []
    real_pool_map = ph._pool_map

    def spy(chunks, workers):
        pooled.append(workers)
        return real_pool_map(chunks, workers)

    monkeypatch.setattr(ph, "_pool_map", spy)
    done = []
    out = phash_many(iter(pngs), workers=2, progress=done.append)
    assert pooled == [2]
    assert out.tolist() == [phash(p) for p in pngs]
    assert done == [3, 6, 9, 12, 15, 18, 21, 23]


def test_phash_many_pool_starts_workers_with_spawn_never_fork(monkeypatch):
    methods = []
    real_get_context = ph.get_context
    monkeypatch.setattr(ph, "get_context", lambda method: methods.append(method) or real_get_context(method))
    monkeypatch.setattr(ph, "SERIAL_MAX", 2)
    phash_many([screen(1), screen(2), screen(3)], workers=2)
    assert methods == ["spawn"]


def test_phash_many_spawn_pool_raises_phash_error_for_a_corrupt_png(monkeypatch):
    monkeypatch.setattr(ph, "SERIAL_MAX", 2)
    with pytest.raises(PHashError, match="PNG at index 2: not a PNG"):
        phash_many([screen(1), screen(2), b"junk", screen(3)], workers=2)


def test_phash_many_in_process_names_the_index_of_a_corrupt_png():
    with pytest.raises(PHashError, match="PNG at index 1: corrupt PNG"):
        phash_many([screen(1), _truncated()], workers=1)


def test_phash_many_of_nothing_is_an_empty_uint64_array():
    out = phash_many([])
    assert out.dtype == np.uint64 and out.shape == (0,)


def test_phash_many_rejects_negative_workers():
    with pytest.raises(ValueError, match="workers"):
        phash_many([screen(1)], workers=-1)


def test_hamming_counts_differing_bits():
    assert hamming(0, 0) == 0
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(0, 2**64 - 1) == 64


def test_hamming_many_matches_hamming():
    rng = np.random.default_rng(0)
    hashes = rng.integers(0, 2**64, size=100, dtype=np.uint64)
    h = int(hashes[7])
    assert hamming_many(hashes, h).tolist() == [hamming(int(x), h) for x in hashes]


def test_hamming_many_rejects_non_uint64_arrays():
    with pytest.raises(TypeError, match="uint64"):
        hamming_many(np.arange(3, dtype=np.float64), 1)
