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
