import pytest

from datalake.lake import Lake


@pytest.fixture
def lake(tmp_path) -> Lake:
    """A fresh, empty lake in a temporary folder."""
    return Lake.init(tmp_path / "lake")
