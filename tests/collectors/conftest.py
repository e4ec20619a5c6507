from tests.adb.helpers import free_port  # noqa: F401  (sets ANDROID_ADB_SERVER_PORT first)

import pytest  # noqa: E402

from mockphone.phone import MockPhone  # noqa: E402
from phones.adb_phone import AdbPhone  # noqa: E402
from tests.adb.conftest import server  # noqa: E402,F401  (the virtual adb server fixture, shared)


@pytest.fixture
def phone():
    p = MockPhone(seed=0)
    yield p
    p.close()


@pytest.fixture
def adb_phone(server):
    return AdbPhone("emulator-5554", port=server.port, retry_delay=0.01)


@pytest.fixture(autouse=True)
def leases(tmp_path, monkeypatch):
    """Each test's phone leases in its own folder (never the user's state folder)."""
    folder = tmp_path / "leases"
    monkeypatch.setenv("PHONELOOP_LEASES", str(folder))
    return folder
