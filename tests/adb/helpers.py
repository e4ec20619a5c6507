"""Shared by the adb and collectors tests: a free loopback port, the stock adb binary, a runner for it.

Importing this module points ``ANDROID_ADB_SERVER_PORT`` at a port nothing listens on
before any test imports adbutils, so no test can reach (or make adbutils start) a real
adb server on 5037.
"""

import os
import pathlib
import socket
import subprocess


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


os.environ["ANDROID_ADB_SERVER_PORT"] = str(free_port())

import adbutils.binaries  # noqa: E402

ADB = pathlib.Path(adbutils.binaries.__file__).parent / "adb"


def stock_adb(port: int, home: pathlib.Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run the stock adb client (bundled with adbutils) against the server on ``port``."""
    env = {**os.environ, "HOME": str(home), "ANDROID_ADB_SERVER_PORT": str(port)}
    return subprocess.run([str(ADB), "-P", str(port), *args], capture_output=True, env=env, timeout=timeout)


def launcher_icon(phone, label: str) -> tuple[int, int]:
    """The centre of the launcher icon named ``label`` on ``phone``'s home screen, read from its UI tree
    (the launcher's grid moves whenever an app is added: no test hard-codes where an icon is)."""
    from datalake.uitree import parse_ui_tree

    phone.nav.home()
    icon = next(e for e in parse_ui_tree(phone.ui_tree()) if e.clickable and e.text == label)
    return icon.center
