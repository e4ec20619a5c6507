"""Phone leases: one run at a time on a phone, across processes on this machine (and a shared folder).

    with Leases.take(["127.0.0.1:5555/emulator-5554"], command="phoneloop collect run", wait=30):
        ...                                          # renewed in the background while the run lives

A lease is one JSON file per phone (``HOST:PORT/SERIAL``, the farm's label) in the leases
folder: ``$PHONELOOP_LEASES``, else ``$XDG_STATE_HOME/phoneloop/leases``, else
``~/.local/state/phoneloop/leases``. It is created with ``O_CREAT | O_EXCL``, so of two runs
asking at once exactly one gets it, and it holds the holder (pid, host, command, since) and
an expiry ``ttl`` seconds ahead, renewed every ``ttl / 3`` by a daemon thread. A lease is
stale, and is taken over, when its holder's pid is dead on this host or its expiry passed
(a holder on another host that stopped renewing). Takeover renames the stale file to a
name of the taker's own and rereads it before removing it, so two takers cannot both win.
A run that finds a live lease waits up to ``wait`` seconds for it, then raises
``PhoneLeased`` naming the holder in one line.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from fleet.errors import PhoneLeased

TTL_SECONDS = 60.0
POLL_SECONDS = 0.2


def leases_dir() -> Path:
    """Where lease files live (``PHONELOOP_LEASES`` overrides the user's state folder)."""
    if os.environ.get("PHONELOOP_LEASES"):
        return Path(os.environ["PHONELOOP_LEASES"])
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "phoneloop" / "leases"


@dataclass(frozen=True)
class Holder:
    """Who holds a phone's lease, as written in its file."""

    phone: str
    pid: int
    host: str
    command: str
    since: float  # epoch seconds
    expires: float  # epoch seconds
    token: str

    def describe(self) -> str:
        since = datetime.fromtimestamp(self.since, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"pid {self.pid} on {self.host} ({self.command!r}) since {since}"

    def stale(self, now: float) -> bool:
        return now >= self.expires or (self.host == socket.gethostname() and not _alive(self.pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def lease_path(folder: Path, phone: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in phone)
    return folder / f"{safe}.lease"


def read_holder(path: Path) -> Holder | None:
    """The holder in a lease file; None when there is none (or it is being written: retried by callers)."""
    try:
        return Holder(**json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):  # a half-written or foreign file: treated as held until it expires
        age = time.time() - path.stat().st_mtime if path.exists() else 0.0
        return Holder(str(path.name), -1, "?", "unreadable lease file", time.time() - age,
                      time.time() - age + TTL_SECONDS, "")


class Leases:
    """The leases one run holds; ``release()`` (or leaving the ``with``) gives them back."""

    def __init__(self, folder: Path, holders: list[Holder], ttl: float) -> None:
        self.folder, self.holders, self.ttl = folder, holders, ttl
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_loop, name="phone-leases", daemon=True)
        self._thread.start()

    @classmethod
    def take(cls, phones: list[str], *, command: str, wait: float = 0.0, ttl: float = TTL_SECONDS,
             folder: Path | None = None) -> Leases:
        """Lease every phone in ``phones`` (all or none), waiting up to ``wait`` seconds for each held one."""
        folder = folder or leases_dir()
        folder.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait
        got: list[Holder] = []
        try:
            for phone in phones:
                got.append(_take_one(folder, phone, command, ttl, deadline))
        except BaseException:
            for holder in got:
                _release(folder, holder)
            raise
        return cls(folder, got, ttl)

    def renew(self) -> None:
        now = time.time()
        for i, holder in enumerate(self.holders):
            path = lease_path(self.folder, holder.phone)
            current = read_holder(path)
            if current is None or current.token != holder.token:
                continue  # taken over (we stopped renewing for longer than the ttl): not ours to write
            renewed = Holder(**{**asdict(holder), "expires": now + self.ttl})
            tmp = path.with_name(f"{path.name}.{holder.token}.tmp")
            tmp.write_text(json.dumps(asdict(renewed)))
            os.replace(tmp, path)
            self.holders[i] = renewed

    def release(self) -> None:
        self._stop.set()
        for holder in self.holders:
            _release(self.folder, holder)
        self.holders = []

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.renew()
            except OSError:
                pass  # a folder briefly unreachable: the next renewal tries again before the expiry

    def __enter__(self) -> Leases:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _take_one(folder: Path, phone: str, command: str, ttl: float, deadline: float) -> Holder:
    path = lease_path(folder, phone)
    while True:
        now = time.time()
        mine = Holder(phone, os.getpid(), socket.gethostname(), command, now, now + ttl, uuid.uuid4().hex)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = read_holder(path)
            if holder is None:
                continue  # released between our open and our read
            if holder.stale(time.time()):
                _take_over(path, holder)
                continue
            if time.monotonic() >= deadline:
                raise PhoneLeased(f"{phone} is leased by {holder.describe()}; wait for it (--lease-wait SECONDS) "
                                  f"or stop that run") from None
            time.sleep(POLL_SECONDS)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(asdict(mine)))
        return mine


def _take_over(path: Path, stale: Holder) -> None:
    """Remove a stale lease unless someone renewed or replaced it meanwhile."""
    grave = path.with_name(f"{path.name}.stale.{uuid.uuid4().hex}")
    try:
        os.rename(path, grave)
    except FileNotFoundError:
        return
    moved = read_holder(grave)
    if moved is not None and moved.token != stale.token and not moved.stale(time.time()):
        try:  # we moved a fresh lease aside: put it back if its place is still free
            os.link(grave, path)
        except FileExistsError:
            pass
    grave.unlink(missing_ok=True)


def _release(folder: Path, holder: Holder) -> None:
    path = lease_path(folder, holder.phone)
    current = read_holder(path)
    if current is not None and current.token == holder.token:
        path.unlink(missing_ok=True)
