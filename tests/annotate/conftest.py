"""One real Label Studio per test session, started headless on a free 127.0.0.1 port.

It runs from its own virtualenv (``scripts/labelstudio.sh`` creates it; if it is missing
the fixture creates it the same way) with its data under a temporary lake; the first
start migrates a fresh database (about a minute). Tests share the server and keep
apart by project title; each test has its own lake. ``PHONELOOP_TEST_LABEL_STUDIO_LAKE``
names a lake folder to keep the server's data in between runs (a rerun then starts in
seconds instead of migrating again).
"""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from annotate import server as ls
from datalake.lake import Lake


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def ls_lake(tmp_path_factory) -> Lake:
    """The lake whose ``labelstudio/`` folder holds the session's server."""
    kept = os.environ.get("PHONELOOP_TEST_LABEL_STUDIO_LAKE")
    if kept:
        return Lake.open(kept) if os.path.isdir(os.path.join(kept, "tables")) else Lake.init(kept)
    return Lake.init(tmp_path_factory.mktemp("labelstudio") / "lake")


@pytest.fixture(scope="session")
def label_studio(ls_lake):
    saved = {k: os.environ.pop(k) for k in ("PHONELOOP_LABEL_STUDIO_URL", "PHONELOOP_LABEL_STUDIO_TOKEN")
             if k in os.environ}
    server = ls.serve(ls_lake.uri, port=free_port(), timeout=300, say=lambda message: None)
    try:
        yield server
    finally:
        ls.stop(ls_lake.uri)
        os.environ.update(saved)


@pytest.fixture
def client(label_studio):
    with label_studio.client() as c:
        yield c


@pytest.fixture
def project() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"
