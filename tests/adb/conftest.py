from tests.adb.helpers import free_port  # noqa: F401  (sets ANDROID_ADB_SERVER_PORT first)

import pytest  # noqa: E402

from mockphone.adb import VirtualAdbServer  # noqa: E402
from phones.adb_phone import client  # noqa: E402


@pytest.fixture
def server():
    s = VirtualAdbServer(phones=2).start()
    yield s
    s.stop()


@pytest.fixture
def adb(server):
    return client(port=server.port)


@pytest.fixture
def dev(adb):
    return adb.device("emulator-5554")


@pytest.fixture(autouse=True)
def leases(tmp_path, monkeypatch):
    """Each test's phone leases in its own folder (never the user's state folder)."""
    folder = tmp_path / "leases"
    monkeypatch.setenv("PHONELOOP_LEASES", str(folder))
    return folder
