"""One factory for the phones every stage drives, by kind: ``mock`` (a MockPhone) or ``adb`` (an AdbPhone).

    phone = make_phone("mock", "mock-0", perturb="light", locale="zh-CN")
    phone = make_phone("adb", "emulator-5554", adb_port=5037)
    phone = make_phone("adb", "10.0.0.7:5037/emulator-5554")      # a phone of another host's adb server
"""

from __future__ import annotations

from typing import Any

from phones.errors import UnknownPhoneKind

KINDS = ("mock", "adb")


def make_phone(kind: str, phone_id: str, adb_port: int | None = None, perturb: Any = "none",
               locale: str = "en-US") -> Any:
    """A fresh phone of ``kind``: ``perturb`` (a profile name, path or profile) and ``locale`` are the
    mock phone's; ``phone_id`` is the adb serial of an ``adb`` phone (``adb_port``: its adb server), or
    HOST:PORT/SERIAL for a phone on another adb server."""
    if kind == "mock":
        from mockphone.phone import MockPhone

        return MockPhone(perturbations=perturb, locale=locale)
    if kind == "adb":
        from phones.adb_phone import AdbPhone

        address, slash, serial = phone_id.rpartition("/")
        host, colon, port = address.rpartition(":")
        if slash and colon and host and port.isdigit():
            return AdbPhone(serial, host=host, port=int(port))
        return AdbPhone(phone_id, port=adb_port)
    raise UnknownPhoneKind(f"phone kind must be one of {', '.join(KINDS)}, not {kind!r}")
