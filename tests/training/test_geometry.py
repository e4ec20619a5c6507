"""The ``resized`` convention follows the resize the processor really applies."""

import pytest
from PIL import Image

from curation.coords import from_model, resized_geometry, smart_resize, to_model
from training.processor import load_processor, resized_convention, set_image_cap


@pytest.fixture(scope="module")
def processor(tiny_path):
    return load_processor(tiny_path)


@pytest.mark.parametrize("size", [(1080, 2400), (270, 600), (1440, 3120), (720, 1280), (2400, 1080)])
@pytest.mark.parametrize("cap", [None, 64 * 64 * 8, 401_408])
def test_resized_convention_is_the_processors_own_resize(processor, size, cap):
    if cap is not None:
        set_image_cap(processor, cap)
    convention = resized_convention(processor)
    out = processor.image_processor(images=[Image.new("RGB", size)], return_tensors="pt")
    _, gh, gw = out["image_grid_thw"][0].tolist()
    patch = processor.image_processor.patch_size
    assert smart_resize(*size, *resized_geometry(convention)) == (gw * patch, gh * patch)
    x, y = to_model(size[0] - 1, size[1] - 1, convention, size)
    assert x <= gw * patch and y <= gh * patch  # the far corner lands inside the image the model sees
    assert from_model(x, y, convention, size) == pytest.approx((size[0] - 1, size[1] - 1))


def test_tiny_geometry_is_not_qwen25s(processor):
    set_image_cap(processor, 64 * 64 * 2)
    convention = resized_convention(processor)
    assert convention != "resized" and resized_geometry(convention)[0] == 32
    assert to_model(1080, 2400, convention, (1080, 2400)) != to_model(1080, 2400, "resized", (1080, 2400))


def test_unknown_resized_geometry_is_refused():
    from curation.coords import check_convention

    for bad in ("resized:0:1:2", "resized:32", "resized:a:b:c", "resized:32:9000:100"):
        with pytest.raises(ValueError, match="convention"):
            check_convention(bad)
