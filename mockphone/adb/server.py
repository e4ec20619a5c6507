"""A loopback adb server speaking the adb host protocol, with MockPhones as its devices.

    with VirtualAdbServer(phones=2, port=0) as server:     # port 0: a free one
        ...  # adbutils.AdbClient(port=server.port), or `adb -P <port> devices`

Host services: ``host:version`` (41, what the stock client expects, so it never replaces
the server), ``host:devices``/``devices-l``, ``host:track-devices[-l]``, ``host:features``, ``host:kill`` (acknowledged;
the server keeps running), ``host:transport*``/``host:tport:*`` (switch the connection to a
device), ``host-serial:S:``/``host-transport-id:N:``/``host:`` + ``get-state``,
``get-serialno``, ``get-devpath``, ``features``, ``wait-for-<transport>-<state>`` (answers
when the device reaches the state), ``forward:``/``forward:norebind:``, ``killforward:``,
``list-forward`` and ``killforward-all`` (the forwards are listed, not carried: virtual
devices listen on no sockets). Device services: ``shell:``,
``shell,v2[,opts]:`` (framed stdout/stderr/exit), ``exec:``, ``sync:`` (STAT, LIST, RECV,
SEND, QUIT), ``reverse:forward|killforward|killforward-all|list-forward``. ``getevent``
without ``-p`` streams raw events until the client hangs up.
Requests to an offline or unauthorized device fail with adb's own messages.
``host:phoneloop-control:SERIAL:COMMAND`` switches a device at run time (``control.py``).
"""

from __future__ import annotations

import queue
import re
import select
import socket
import socketserver
import struct
import threading
import time
from typing import Any

from mockphone.adb import control
from mockphone.adb.device import VirtualDevice
from mockphone.adb.sh import tokenize
from mockphone.phone import MockPhone

ADB_VERSION = 41
FEATURES = "shell_v2,cmd,fixed_push_mkdir"
HOST_QUERIES = ("get-state", "get-serialno", "get-devpath", "features", "list-forward")
SYNC_CHUNK = 64 * 1024
UNAUTHORIZED = ("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n"
                "Try 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device.")


class ProtocolClosed(Exception):
    """The client hung up."""


class _Conn:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ProtocolClosed
            buf += chunk
        return bytes(buf)

    def request(self) -> str:
        size = int(self.read(4), 16)
        return self.read(size).decode("utf-8", "replace")

    def okay(self, payload: bytes = b"") -> None:
        self.sock.sendall(b"OKAY" + payload)

    def block(self, text: str | bytes) -> bytes:
        data = text.encode() if isinstance(text, str) else text
        return f"{len(data):04x}".encode() + data

    def fail(self, message: str) -> None:
        self.sock.sendall(b"FAIL" + self.block(message))


class VirtualAdbServer:
    """``phones``: how many MockPhones (seeded 0..N-1), or a list of phones to expose."""

    def __init__(self, phones: int | list[MockPhone] = 1, port: int = 0, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the virtual adb server listens on loopback only, not {host!r}")
        mocks = [MockPhone(seed=i) for i in range(phones)] if isinstance(phones, int) else list(phones)
        self.devices = [VirtualDevice(f"emulator-{5554 + 2 * i}", p, i + 1) for i, p in enumerate(mocks)]
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._handle(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server((host, port), Handler)
        self.host, self.port = self._server.server_address[:2]
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.forwards: list[tuple[str, str, str]] = []  # (serial, local, remote)
        self.reverses: dict[str, list[tuple[str, str]]] = {}  # serial -> [(remote on device, local on host)]

    # --- lifecycle ----------------------------------------------------------------------
    def start(self) -> VirtualAdbServer:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="virtual-adb", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._stopping.set()
        for d in self.devices:
            d.close()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> VirtualAdbServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def device(self, serial: str) -> VirtualDevice:
        return next(d for d in self.devices if d.serial == serial)

    # --- host services --------------------------------------------------------------------
    def _handle(self, sock: socket.socket) -> None:
        conn = _Conn(sock)
        try:
            while True:
                service = conn.request()
                if service.startswith("host"):
                    device = self._host(conn, service)
                    if device is None:
                        if service.startswith(("host:transport", "host:tport")):
                            continue  # a failed switch already answered FAIL; the client decides
                        return
                    continue_with = device
                    service = conn.request()
                    self._device_service(conn, continue_with, service)
                    return
                conn.fail(f"unknown host service {service!r}")
                return
        except (ProtocolClosed, ConnectionError, ValueError):
            return
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _listing(self, long: bool) -> str:
        rows = []
        for d in self.devices:
            props = d.props()
            model = re.sub(r"[^A-Za-z0-9._-]", "_", props["ro.product.model"])  # as adbd reports it
            tags = (f" product:{props['ro.product.name']} model:{model} device:{props['ro.product.device']} "
                    f"transport_id:{d.transport_id}") if long else ""
            rows.append(f"{d.serial}\t{d.state}{tags}\n")
        return "".join(rows)

    def _pick(self, conn: _Conn, selector: str, require_online: bool = True) -> VirtualDevice | None:
        """A device by ``serial:S``, ``transport-id:N``, ``any``/``usb``/``local``; answers FAIL if none."""
        if selector.startswith("serial:"):
            found = [d for d in self.devices if d.serial == selector[7:]]
            missing = f"device '{selector[7:]}' not found"
        elif selector.startswith(("transport-id:", "id:")):
            tid = selector.split(":", 1)[1]
            found = [d for d in self.devices if str(d.transport_id) == tid]
            missing = f"no device with transport id '{tid}'"
        elif selector in ("any", "usb", "local"):
            found = [d for d in self.devices if d.state == "device"] if require_online else list(self.devices)
            missing = "no devices/emulators found"
            if len(found) > 1:
                conn.fail("more than one device/emulator")
                return None
        else:
            found = [d for d in self.devices if d.serial == selector]
            missing = f"device '{selector}' not found"
        if not found:
            conn.fail(missing)
            return None
        device = found[0]
        if require_online and device.state != "device":
            conn.fail(UNAUTHORIZED if device.state == "unauthorized" else "device offline")
            return None
        return device

    def _host(self, conn: _Conn, service: str) -> VirtualDevice | None:
        """Answer one host service; returns the device when the connection switched to it."""
        if service == "host:version":
            conn.okay(conn.block(f"{ADB_VERSION:04x}"))
        elif service in ("host:devices", "host:devices-l"):
            conn.okay(conn.block(self._listing(service.endswith("-l"))))
        elif service in ("host:features", "host:host-features") and not service.startswith("host:features:"):
            conn.okay(conn.block(FEATURES))
        elif service in ("host:track-devices", "host:track-devices-l"):
            conn.okay()
            self._track(conn, service.endswith("-l"))
        elif service.startswith("host:wait-for-") or service == "host:killforward-all":
            self._host_query(conn, service)
        elif service == "host:list-forward":
            conn.okay(conn.block("".join(f"{s} {lo} {re_}\n" for s, lo, re_ in self.forwards)))
        elif service == "host:kill":
            conn.okay()  # acknowledged; the virtual server is stopped by its owner, not by clients
        elif service.startswith(control.SERVICE):
            serial, _, command = service[len(control.SERVICE):].rpartition(":")
            device = self._pick(conn, "serial:" + serial, require_online=False)
            if device is not None:
                try:
                    conn.okay(conn.block(control.apply(device, command)))
                except control.ControlError as exc:
                    conn.fail(str(exc))
        elif service.startswith(("host:transport", "host:tport:")):
            if service.startswith("host:tport:"):
                device = self._pick(conn, service[len("host:tport:"):])
                if device is not None:
                    conn.okay(struct.pack("<Q", device.transport_id))
                return device
            rest = service[len("host:transport"):]
            selector = {"-any": "any", "-usb": "usb", "-local": "local"}.get(rest) or (
                "transport-id:" + rest[4:] if rest.startswith("-id:") else "serial:" + rest.lstrip(":"))
            device = self._pick(conn, selector)
            if device is not None:
                conn.okay()
            return device
        else:
            self._host_query(conn, service)
        return None

    def _track(self, conn: _Conn, long: bool) -> None:
        """Send the device list now and again whenever a state changes, until the client hangs up."""
        last = None
        while not self._stopping.is_set():
            listing = self._listing(long)
            if listing != last:
                conn.sock.sendall(conn.block(listing))
                last = listing
            readable, _, _ = select.select([conn.sock], [], [], 0.1)
            if readable and not conn.sock.recv(4096):
                return

    def _host_query(self, conn: _Conn, service: str) -> None:
        """``host[-serial:S|-transport-id:N]:QUERY`` for get-state & co, wait-for-*, forward, killforward."""
        prefix, query = _split_query(service)
        if query is None:
            conn.fail(f"unsupported host service {service!r} (virtual adb server)")
            return
        if prefix.startswith("host-serial:"):
            selector = "serial:" + prefix[len("host-serial:"):]
        elif prefix.startswith("host-transport-id:"):
            selector = "transport-id:" + prefix[len("host-transport-id:"):]
        else:
            selector = "any"
        if query.startswith("wait-for-"):
            self._wait_for(conn, selector, query)
            return
        if query == "killforward-all" and prefix == "host":
            self.forwards.clear()
            conn.okay()
            return
        device = self._pick(conn, selector, require_online=query not in ("get-state", "list-forward"))
        if device is None:
            return
        if query.startswith(("forward:", "killforward")):
            self._forward(conn, device, query)
            return
        answer = {"get-state": device.state, "get-serialno": device.serial, "get-devpath": "virtual:" + device.serial,
                  "features": FEATURES, "list-forward": "".join(
                      f"{s} {lo} {r}\n" for s, lo, r in self.forwards if s == device.serial)}[query]
        conn.okay(conn.block(answer))

    def _wait_for(self, conn: _Conn, selector: str, query: str) -> None:
        """``wait-for-TRANSPORT-STATE``: OKAY now, OKAY again once a matching device is in STATE."""
        state = query.rsplit("-", 1)[-1]
        state = "device" if state in ("device", "any") else state
        conn.okay()
        while not self._stopping.is_set():
            if selector.startswith("serial:"):
                found = [d for d in self.devices if d.serial == selector[7:]]
            elif selector.startswith("transport-id:"):
                found = [d for d in self.devices if str(d.transport_id) == selector.split(":", 1)[1]]
            else:
                found = list(self.devices)
            if any(d.state == state for d in found) or (state == "disconnect" and not found):
                conn.okay()
                return
            readable, _, _ = select.select([conn.sock], [], [], 0.05)
            if readable and not conn.sock.recv(4096):
                return

    def _forward(self, conn: _Conn, device: VirtualDevice, query: str) -> None:
        if query.startswith("killforward:"):
            local = query[len("killforward:"):]
            before = len(self.forwards)
            self.forwards = [f for f in self.forwards if not (f[0] == device.serial and f[1] == local)]
            if len(self.forwards) == before:
                conn.fail(f"listener '{local}' not found")
                return
            conn.okay()
            return
        spec = query[len("forward:"):]
        norebind = spec.startswith("norebind:")
        local, _, remote = spec.removeprefix("norebind:").partition(";")
        if not local or not remote:
            conn.fail(f"malformed forward spec '{spec}'")
            return
        if norebind and any(f[1] == local for f in self.forwards):
            conn.fail(f"cannot rebind existing socket '{local}'")
            return
        self.forwards = [f for f in self.forwards if f[1] != local] + [(device.serial, local, remote)]
        conn.okay()
        conn.okay()  # adb answers twice: the host accepted, then the listener is bound

    # --- device services --------------------------------------------------------------------
    def _device_service(self, conn: _Conn, device: VirtualDevice, service: str) -> None:
        device.request()
        if device.state != "device":
            conn.fail("device offline")
            return
        if service.startswith("host:") and service[5:].startswith(("forward:", "killforward:")):
            self._forward(conn, device, service[5:])  # the stock client asks on the device's transport
            return
        if service == "host:killforward-all":
            self.forwards = [f for f in self.forwards if f[0] != device.serial]
            conn.okay()
            conn.okay()  # as for forward: accepted, then done
            return
        name, _, command = service.partition(":")
        kind, *options = name.split(",")
        if kind == "sync":
            conn.okay()
            self._sync(conn, device)
        elif kind == "reverse":
            self._reverse(conn, device, command)
        elif kind in ("shell", "exec"):
            v2 = kind == "shell" and "v2" in options
            if not command.strip():
                conn.fail("interactive shells are not supported by virtual devices; pass a command")
                return
            conn.okay()
            if _is_event_stream(command):
                self._stream_events(conn, device, v2)
                return
            result = device.shell(command)
            if v2:
                packets = b""
                if result.stdout:
                    packets += _packet(1, result.stdout)
                if result.stderr:
                    packets += _packet(2, result.stderr)
                conn.sock.sendall(packets + _packet(3, bytes([result.code & 0xFF])))
            else:
                conn.sock.sendall(result.combined if result.combined is not None else result.stdout + result.stderr)
        else:
            conn.fail(f"unsupported device service {service!r} (virtual adb server)")

    def _reverse(self, conn: _Conn, device: VirtualDevice, command: str) -> None:
        rules = self.reverses.setdefault(device.serial, [])
        if command == "list-forward":
            conn.okay()
            conn.sock.sendall(conn.block("".join(f"{device.serial} {r} {lo}\n" for r, lo in rules)))
        elif command == "killforward-all":
            rules.clear()
            conn.okay()
        elif command.startswith("killforward:"):
            remote = command[len("killforward:"):]
            if not any(r == remote for r, _ in rules):
                conn.fail(f"listener '{remote}' not found")
                return
            rules[:] = [(r, lo) for r, lo in rules if r != remote]
            conn.okay()
        elif command.startswith("forward:"):
            remote, _, local = command[len("forward:"):].removeprefix("norebind:").partition(";")
            rules[:] = [(r, lo) for r, lo in rules if r != remote] + [(remote, local)]
            conn.okay()
            conn.okay()
        else:
            conn.fail(f"unsupported reverse request {command!r}")

    def _stream_events(self, conn: _Conn, device: VirtualDevice, v2: bool) -> None:
        q = device.listen()
        try:
            while True:
                readable, _, _ = select.select([conn.sock], [], [], 0)
                if readable and not conn.sock.recv(4096):
                    return  # client hung up
                if device.state != "device":
                    return  # the phone went away: the stream ends, as adb's does
                try:
                    line = q.get(timeout=0.05)
                except queue.Empty:
                    continue
                if line is None:
                    return
                data = (line + "\n").encode()
                conn.sock.sendall(_packet(1, data) if v2 else data)
        except OSError:
            return
        finally:
            device.unlisten(q)

    def _sync(self, conn: _Conn, device: VirtualDevice) -> None:
        while True:
            cmd = conn.read(4)
            size = struct.unpack("<I", conn.read(4))[0]
            if cmd == b"QUIT":
                return
            path = conn.read(size).decode("utf-8", "replace")
            with device.lock:
                if cmd == b"STAT":
                    mode, length = _stat(device, path)
                    conn.sock.sendall(b"STAT" + struct.pack("<III", mode, length, int(time.time()) if mode else 0))
                elif cmd == b"LIST":
                    self._list(conn, device, path)
                elif cmd == b"RECV":
                    data = device.files.get(path)
                    if data is None:
                        conn.sock.sendall(b"FAIL" + _lp(f"remote object '{path}' does not exist"))
                        continue
                    for i in range(0, len(data), SYNC_CHUNK):
                        conn.sock.sendall(b"DATA" + _lp(data[i:i + SYNC_CHUNK]))
                    conn.sock.sendall(b"DONE" + struct.pack("<I", 0))
                elif cmd == b"SEND":
                    remote = path.rsplit(",", 1)[0]
                    buf = bytearray()
                    while True:
                        kind = conn.read(4)
                        n = struct.unpack("<I", conn.read(4))[0]
                        if kind == b"DONE":
                            break
                        if kind != b"DATA":
                            conn.sock.sendall(b"FAIL" + _lp(f"unexpected {kind!r} in SEND"))
                            return
                        buf += conn.read(n)
                    device.files[remote] = bytes(buf)
                    conn.sock.sendall(b"OKAY" + struct.pack("<I", 0))
                else:
                    conn.sock.sendall(b"FAIL" + _lp(f"unsupported sync request {cmd!r}"))
                    return

    def _list(self, conn: _Conn, device: VirtualDevice, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        now = int(time.time())
        for full, data in sorted(device.files.items()):
            if full.startswith(prefix) and "/" not in full[len(prefix):]:
                name = full[len(prefix):].encode()
                conn.sock.sendall(b"DENT" + struct.pack("<IIII", 0o100644, len(data), now, len(name)) + name)
        conn.sock.sendall(b"DONE" + struct.pack("<IIII", 0, 0, 0, 0))


def _stat(device: VirtualDevice, path: str) -> tuple[int, int]:
    if path in device.files:
        return 0o100644, len(device.files[path])
    prefix = path.rstrip("/") + "/"
    if path in ("/", "/sdcard", "/sdcard/", "/data/local/tmp", "/data/local/tmp/") or any(
            f.startswith(prefix) for f in device.files):
        return 0o040771, 4096
    return 0, 0


def _split_query(service: str) -> tuple[str, str | None]:
    """``host-serial:S:get-state`` -> (``host-serial:S``, ``get-state``); the serial may contain colons."""
    for marker in (":wait-for-", ":forward:", ":killforward:", ":killforward-all"):
        i = service.find(marker)
        if i >= 0:
            return service[:i], service[i + 1:]
    query = next((q for q in HOST_QUERIES if service.endswith(":" + q)), None)
    return (service[: -len(query) - 1], query) if query else (service, None)


def _lp(data: str | bytes) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return struct.pack("<I", len(raw)) + raw


def _packet(kind: int, data: bytes) -> bytes:
    return bytes([kind]) + struct.pack("<I", len(data)) + data


def _is_event_stream(command: str) -> bool:
    try:
        argv = tokenize(command)
    except ValueError:
        return False
    flags = "".join(a.lstrip("-") for a in argv[1:] if a.startswith("-"))
    return bool(argv) and argv[0] == "getevent" and "p" not in flags
