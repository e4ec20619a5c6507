import pytest

from mockphone.phone import MockPhone


@pytest.fixture
def phone():
    p = MockPhone(seed=0)
    yield p
    p.close()
