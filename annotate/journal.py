"""The webhook inbox's journal: an fsync'd append file inside a local lake, committed later.

    append(folder, delivery_id, body, received_at)   # the acknowledgement: one write + fsync
    committed = commit(lake)                         # journal -> webhook_inbox rows (received), once

A Delta commit per delivery costs tens of milliseconds on a loaded machine (p99 over 100 ms:
a log entry, a Parquet file, a checkpoint now and then); Label Studio waits for the webhook.
So on a local lake the acknowledgement is one line appended to
``<lake>/webhook_inbox.journal/current`` and ``fsync``'d, and the background ingest
(``annotate.inbox.drain``) first commits the journal into ``webhook_inbox`` as ``received``
rows (the same table and rows as before: no schema change), then ingests them.

Safety (nothing acknowledged is lost, nothing doubles):

- a line is ``<received_at µs> <sha256 of body> <base64 body>\\n``; a line cut short by a
  crash (never acknowledged: the answer goes after the fsync) fails its hash and is skipped;
- appenders hold an exclusive ``flock`` on ``current`` while they write; ``commit`` takes the
  same lock to rename ``current`` to ``draining-<ns>-<pid>`` (an appender that opened the old
  file sees its inode is no longer ``current`` and opens the new one), commits every
  ``draining-*`` file's deliveries that ``webhook_inbox`` does not hold yet, and only then
  deletes those files: a process killed anywhere in between leaves files the next commit
  reads again, and ids already received are not written twice.

Object-storage lakes have no local folder to fsync: they keep one Delta commit per delivery.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from datalake import storage

FOLDER = "webhook_inbox.journal"
CURRENT = "current"
_made: set[str] = set()


def folder_of(lake) -> Path | None:
    """The journal folder of a local lake; None for an object-storage lake (it commits per delivery)."""
    if storage.is_remote(lake.uri):
        return None
    return Path(lake.uri.removeprefix("file://")) / FOLDER


def append(folder: Path, delivery_id: str, body: bytes, received_at: datetime) -> None:
    """Append one delivery durably (returns after the fsync)."""
    if str(folder) not in _made:
        folder.mkdir(exist_ok=True)
        _fsync_dir(folder.parent)
        _made.add(str(folder))
    micros = int(received_at.timestamp() * 1_000_000)
    line = b"%d %s %s\n" % (micros, delivery_id.encode(), base64.b64encode(body))
    path = folder / CURRENT
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.stat(path).st_ino != os.fstat(fd).st_ino:
                    continue  # rotated away by a commit between our open and our lock: open the new one
            except FileNotFoundError:
                continue
            new = os.fstat(fd).st_size == 0
            os.write(fd, line)
            os.fsync(fd)
            if new:
                _fsync_dir(folder)  # the new file's name is durable too
            return
        finally:
            os.close(fd)  # releases the lock


def read(path: Path) -> list[dict]:
    """The whole deliveries of a journal file (a torn last line is skipped)."""
    out = []
    for line in path.read_bytes().split(b"\n")[:-1]:  # the part after the last newline is torn
        parts = line.split(b" ")
        if len(parts) != 3:
            continue
        try:
            micros, body = int(parts[0]), base64.b64decode(parts[2], validate=True)
        except ValueError:
            continue
        delivery = parts[1].decode("ascii", "replace")
        if hashlib.sha256(body).hexdigest() != delivery:
            continue
        out.append({"delivery_id": delivery, "payload": body,
                    "created_at": datetime.fromtimestamp(micros / 1_000_000, timezone.utc)})
    return out


def rotate(folder: Path) -> None:
    """Rename ``current`` to a ``draining-*`` file under the appenders' lock (none is mid-write)."""
    path = folder / CURRENT
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                return  # another commit rotated it first
        except FileNotFoundError:
            return
        os.rename(path, folder / f"draining-{time.time_ns():020d}-{os.getpid()}")
        _fsync_dir(folder)
    finally:
        os.close(fd)


def commit(lake, source: str) -> int:
    """Move the journal's deliveries into ``webhook_inbox`` (``received`` rows); returns how many
    were new. Files are deleted only after their rows are committed."""
    folder = folder_of(lake)
    if folder is None or not folder.is_dir():
        return 0
    rotate(folder)
    files = sorted(folder.glob("draining-*"))
    if not files:
        return 0
    deliveries = {}
    for path in files:
        for d in read(path):
            deliveries.setdefault(d["delivery_id"], d)
    have = set(lake.sql("SELECT DISTINCT delivery_id FROM webhook_inbox WHERE kind = 'received' "
                        "AND list_contains(?, delivery_id)", [sorted(deliveries)]).column(0).to_pylist())
    rows = [{**d, "kind": "received", "source": source} for i, d in deliveries.items() if i not in have]
    if rows:
        lake.append("webhook_inbox", sorted(rows, key=lambda r: (r["created_at"], r["delivery_id"])))
    for path in files:
        path.unlink(missing_ok=True)
    return len(rows)


def waiting(lake) -> int:
    """Deliveries in the journal not yet committed (whole lines of every journal file)."""
    folder = folder_of(lake)
    if folder is None or not folder.is_dir():
        return 0
    return len({d["delivery_id"] for p in folder.iterdir() if p.name == CURRENT or p.name.startswith("draining-")
                for d in read(p)})


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
