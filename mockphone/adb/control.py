"""Run-time control of a served virtual device: take it offline, bring it back, rotate it.

A test or a person drives a running ``phoneloop device serve`` the way a cable, a lock
screen or a hand would, without restarting it: ``phoneloop device control SERIAL offline``
(or ``send(port, serial, "offline")``). The server answers the host service
``host:phoneloop-control:SERIAL:COMMAND`` (a virtual-server extension; real adb servers
answer FAIL), so the device can be switched even while it is offline.

Commands: ``offline``, ``online`` (state ``device``), ``unauthorized``, ``rotate N`` (0..3),
``screen on|off``, ``transition SECONDS``, ``slow-grabs FRACTION``.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockphone.adb.device import VirtualDevice

SERVICE = "host:phoneloop-control:"
COMMANDS = ("offline", "online", "unauthorized", "rotate N", "screen on|off", "transition SECONDS",
            "slow-grabs FRACTION")


class ControlError(ValueError):
    """A control command the device cannot carry out (unknown, or a bad argument)."""


def apply(device: VirtualDevice, command: str) -> str:
    """Carry out ``command`` on ``device``; returns what changed, in words."""
    words = command.split()
    name, args = (words[0], words[1:]) if words else ("", [])
    try:
        if name in ("offline", "online", "unauthorized") and not args:
            with device.lock:
                device.state = "device" if name == "online" else name
                device.offline_after = None
            return f"{device.serial} is {device.state}"
        if name == "rotate" and len(args) == 1:
            device.rotate(int(args[0]))
            return f"{device.serial} rotated to {device.rotation}"
        if name == "screen" and args in (["on"], ["off"]):
            device.configure(screen_on=args[0] == "on")
            return f"{device.serial} screen {args[0]}"
        if name == "transition" and len(args) == 1:
            device.configure(transition=float(args[0]))
            return f"{device.serial} transitions take {float(args[0])} s"
        if name == "slow-grabs" and len(args) == 1:
            device.configure(slow_grabs=float(args[0]))
            return f"{device.serial} grabs late {float(args[0]):.0%} of the time"
    except ValueError as exc:
        raise ControlError(f"{command!r}: {exc}") from None
    raise ControlError(f"unknown control command {command!r} (known: {', '.join(COMMANDS)})")


def send(port: int, serial: str, command: str, host: str = "127.0.0.1", timeout: float = 5.0) -> str:
    """Send one control command to the virtual adb server on ``host:port``; returns its answer."""
    request = f"{SERVICE}{serial}:{command}".encode()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(f"{len(request):04x}".encode() + request)
        status = _read(sock, 4)
        size = int(_read(sock, 4), 16)
        text = _read(sock, size).decode("utf-8", "replace")
    if status != b"OKAY":
        raise ControlError(text)
    return text


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ControlError("the adb server closed the connection")
        buf += chunk
    return buf
