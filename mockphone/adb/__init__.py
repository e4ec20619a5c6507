"""A virtual adb server: mock phones as adb devices, for adbutils, the stock adb client and any harness.

    from mockphone.adb import VirtualAdbServer
    with VirtualAdbServer(phones=2, port=0) as server:
        print(server.port)   # adb -P <port> devices; adb -P <port> shell screencap -p > s.png

Modules: ``server`` (the host protocol, shell/exec/sync services), ``control`` (run-time
switches: offline, online, rotate), ``display`` (transitions, late grabs), ``device`` (one
VirtualDevice per MockPhone: its commands, files, faults, getevent), ``sh`` (command
lines), ``getevent`` (raw touch/key events for replayed gestures). Imports mockphone
and datalake.types only.
"""

from mockphone.adb.device import VirtualDevice
from mockphone.adb.server import ADB_VERSION, VirtualAdbServer

__all__ = ["ADB_VERSION", "VirtualAdbServer", "VirtualDevice"]
