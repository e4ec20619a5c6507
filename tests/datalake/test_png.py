import pytest

from datalake.errors import InvalidRecord
from datalake.png import check_png
from tests.factory import H, W, corrupt_png, png, truncated_png


def test_valid_png_gives_its_size():
    assert check_png(png(1)) == (W, H)


@pytest.mark.parametrize("data, message", [
    (b"not a png at all", "bad signature"),
    (truncated_png(2), "truncated"),
    (corrupt_png(3), "CRC mismatch"),
    (png(4)[:8] + png(4)[33:], "does not start with an IHDR"),
])
def test_broken_pngs_are_rejected_with_the_reason(data, message):
    with pytest.raises(InvalidRecord, match=message):
        check_png(data)


def _screens():
    """Realistic raw screens (flat UI, text, a photo-like noisy band), odd sizes, every channel count."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(19)
    for k, (w, h, mode) in enumerate([(270, 600, "RGB"), (1, 1, "RGB"), (37, 5, "RGBA"), (108, 240, "L"),
                                      (64, 3, "L"), (1080, 2400, "RGB")]):
        img = Image.new(mode, (w, h), "white")
        ImageDraw.Draw(img).text((2, 2), f"screen {k}", fill="black")
        pixels = np.array(img)
        band = slice(h // 3, h // 3 + max(1, h // 10))
        pixels[band] = rng.integers(0, 256, size=pixels[band].shape, dtype=np.uint8)
        yield pixels


@pytest.mark.parametrize("pixels", list(_screens()), ids=lambda p: "x".join(map(str, p.shape)))
def test_encoded_png_decodes_to_the_same_pixels_in_every_reader(pixels):
    import io

    import cv2
    import numpy as np
    import pyspng
    from PIL import Image

    from datalake.png import encode_png

    data = encode_png(pixels)
    assert check_png(data) == (pixels.shape[1], pixels.shape[0])
    want = pixels if pixels.ndim == 3 else pixels[:, :, None]
    pil = np.asarray(Image.open(io.BytesIO(data)))
    assert (pil.reshape(want.shape) == want).all()
    spng = pyspng.load(data)
    assert (spng.reshape(want.shape) == want).all()
    ocv = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if want.shape[2] in (3, 4):  # OpenCV gives BGR(A)
        ocv = ocv[:, :, [2, 1, 0, 3][:want.shape[2]]]
    assert (ocv.reshape(want.shape) == want).all()


@pytest.mark.parametrize("shape, dtype", [((4, 4, 5), "uint8"), ((4, 4, 2), "uint8"), ((0, 4, 3), "uint8"), ((4, 4, 3), "uint16"),
                                          ((4,), "uint8")])
def test_encoder_refuses_pixels_it_cannot_store_losslessly(shape, dtype):
    import numpy as np

    from datalake.png import encode_png

    with pytest.raises(InvalidRecord, match="cannot encode pixels"):
        encode_png(np.zeros(shape, dtype))
