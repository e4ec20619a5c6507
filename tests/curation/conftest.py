"""Fixtures for curation tests (the Hugging Face environment is set in tests/conftest.py)."""

import pytest

from tests.hub_server import HubServer


@pytest.fixture
def hub():
    """A fresh, empty loopback Hugging Face Hub on 127.0.0.1 (see tests/hub_server.py)."""
    import huggingface_hub.constants

    if not huggingface_hub.constants.HF_HUB_DISABLE_XET:
        pytest.fail("huggingface_hub was imported before HF_HUB_DISABLE_XET=1 was set; the loopback Hub has no Xet")
    with HubServer() as server:
        yield server
