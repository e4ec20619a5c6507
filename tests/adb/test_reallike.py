"""`phoneloop device serve --real-like`: real-like phones that an adb client sees as real ones."""

import os
import subprocess
import sys
import time

from tests.adb.helpers import free_port

from phones.adb_phone import AdbPhone  # noqa: E402

QUICK = ["--capture-latency", "0", "--dump-latency", "0", "--transition", "0", "--slow-grabs", "0",
         "--grab-jitter", "0"]


def test_device_serve_real_like_serves_the_realish_skin_without_a_verifier():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "device", "serve", "--port", str(port),
                             "--real-like", *QUICK], stderr=subprocess.PIPE, env=os.environ.copy())
    try:
        phone = None
        for _ in range(200):
            try:
                phone = AdbPhone("emulator-5554", port=port)
                facts = phone.facts()
                break
            except Exception:  # noqa: BLE001 - the server is still starting
                time.sleep(0.05)
        assert (facts["width"], facts["height"], facts["dpi"], facts["mock"]) == (1080, 2340, 400, False)
        assert "home_handle" in phone.ui_tree()  # a gesture bar, not three buttons
        code, err, _ = phone.shell("phoneloop task start SettingsWifiOff 0 && phoneloop task check")
        assert code != 0 and "no verifier" in err
    finally:
        proc.terminate()
        proc.wait(10)
