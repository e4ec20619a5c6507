"""The webhook's durable queue: acknowledge fast, ingest from the lake's ``webhook_inbox``.

    delivery = receive(lake, body)      # the API's webhook: checks the body, one small commit, ack
    report = drain(lake)                # received deliveries -> annotations rows (idempotent)
    Ingestor(lake.uri).kick()           # drain in a background thread, now and whenever kicked

Label Studio waits for its webhook synchronously (1 s timeout), so the API does only what
cannot wait: it checks the body's shape and every result item (``annotate.convert.check``:
a malformed delivery is refused with 422 at once), stores it durably and answers 202: on a
local lake one fsync'd line in the lake's journal (``annotate.journal``; ``drain`` first
commits the journal into ``webhook_inbox`` as ``received`` rows), on object storage a
``received`` row appended to ``webhook_inbox`` (one Delta commit). The
lake lookups (the episode, the step, the people) and the annotation's commit happen in
``drain``: each pending delivery (received, with no ``ingested`` or ``failed`` row yet)
becomes its annotations row as ``annotate.webhook.ingest`` makes it; a delivery that
cannot (an episode not in the lake) goes to the quarantine and gets a ``failed`` row.
Rows first, then the marks: a process that dies between the ack and the ingest, or in
the middle of a drain, loses nothing, and the next drain (every API start runs one)
writes what is missing; row ids are deterministic, so nothing doubles.

``ANNOTATIONS_DELETED`` deliveries retract the annotations they name
(``annotate.reconcile``). After a drain whose users were listed, rows stored under a
bare user id are healed. The background ingest waits ``COALESCE_S`` after a kick, so
deliveries arriving together become one drain (and one commit) instead of competing with
the acknowledgements; ``PHONELOOP_WEBHOOK_INGEST_DELAY_S`` sets that wait (tests stop a
process in between with a long one).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from annotate import journal as journal_file
from annotate import reconcile
from annotate.convert import check, to_row
from annotate.errors import InvalidPayload
from annotate.people import directory
from datalake import schema as S
from datalake.lake import Lake
from datalake.writer import Rejected

DELETED = "ANNOTATIONS_DELETED"
SOURCE = "label-studio"
QUARANTINE_ORIGIN = "label-studio:webhook"
IDLE_S = 30.0  # a background ingestor with nothing to do for this long ends (the next kick starts one)
COALESCE_S = 0.25  # after a kick, wait this long so deliveries arriving together are drained in one go
_INBOXES: dict[str, DeltaTable] = {}
_INBOX_LOCK = threading.Lock()
log = logging.getLogger("phoneloop.annotate")


def receive(lake: Lake, body: bytes, *, journal: bool | None = None) -> str:
    """Check a delivery and store it durably; returns its id (sha256 of the body).
    Raises InvalidPayload (nothing stored) for a body phoneloop can never ingest.
    ``journal``: append to the lake's journal (``annotate.journal``; the default on a local
    lake, unless ``PHONELOOP_WEBHOOK_JOURNAL=0``) or commit a ``received`` row to ``webhook_inbox``
    now (always on object storage)."""
    try:
        payload = json.loads(body)
    except ValueError:
        raise InvalidPayload("the webhook body is not JSON") from None
    if isinstance(payload, dict) and payload.get("action") == DELETED:
        _deleted_ids(payload)
    else:
        check(payload)
    lake.check_writable()
    delivery = hashlib.sha256(body).hexdigest()
    folder = journal_file.folder_of(lake)
    if journal is None:
        journal = os.environ.get("PHONELOOP_WEBHOOK_JOURNAL", "1") != "0"
    if folder is not None and journal:
        journal_file.append(folder, delivery, body, S.now())
        return delivery
    row = {"delivery_id": delivery, "kind": "received", "source": SOURCE, "payload": body, "created_at": S.now()}
    data = pa.Table.from_pylist([row], schema=S.WEBHOOK_INBOX)
    uri = lake.table_uri("webhook_inbox")
    with _INBOX_LOCK:  # one open table per lake: an append then reads only the log's new entries
        table = _INBOXES.get(uri)
        if table is None:
            table = _INBOXES[uri] = DeltaTable(uri, storage_options=lake.storage_options)
        write_deltalake(table, data, mode="append")
    return delivery


def pending(lake: Lake) -> list[dict]:
    """Deliveries received and not yet ingested (nor failed), oldest first."""
    return lake.sql("""
        SELECT delivery_id, payload FROM webhook_inbox
        WHERE kind = 'received'
          AND delivery_id NOT IN (SELECT delivery_id FROM webhook_inbox WHERE kind IN ('ingested', 'failed'))
        QUALIFY row_number() OVER (PARTITION BY delivery_id ORDER BY created_at) = 1
        ORDER BY created_at, delivery_id
    """).to_pylist()


@dataclass
class DrainReport:
    deliveries: int = 0
    written: int = 0
    already: int = 0  # their row was in the lake already (a redelivery, a pull before)
    retracted: int = 0
    failed: int = 0
    healed: int = 0
    reasons: list[str] = field(default_factory=list)


def drain(lake: Lake) -> DrainReport:
    """Ingest every pending delivery: annotations rows (one commit), quarantine, then the marks."""
    report = DrainReport()
    journal_file.commit(lake, SOURCE)  # acknowledged deliveries still in the journal become received rows
    todo = pending(lake)
    if not todo:
        return report
    report.deliveries = len(todo)
    known = lake.column_values("annotations", "annotation_id")
    rows, marks, rejected, deleted = [], [], [], []
    people = None
    for item in todo:
        payload = json.loads(item["payload"])
        if isinstance(payload, dict) and payload.get("action") == DELETED:
            deleted.append(payload)
            marks.append(_mark(item, "ingested"))
            continue
        annotation = payload.get("annotation") if isinstance(payload, dict) else None
        people = directory(lake.uri).people(annotation.get("completed_by") if isinstance(annotation, dict) else None)
        try:
            row = to_row(lake, payload, people)
        except InvalidPayload as exc:
            report.failed += 1
            report.reasons.append(f"{item['delivery_id'][:12]}: {exc}")
            rejected.append(Rejected(reason=str(exc), payload=item["payload"], origin=QUARANTINE_ORIGIN,
                                     locator=item["delivery_id"], episode_id=_episode_id(payload)))
            marks.append(_mark(item, "failed", reason=str(exc)))
            continue
        if row["annotation_id"] in known:
            report.already += 1
        else:
            known.add(row["annotation_id"])
            rows.append(row)
        marks.append(_mark(item, "ingested", annotation_id=row["annotation_id"]))
    if rows:
        lake.append("annotations", rows)
    if rejected:
        lake.quarantine(rejected)
    report.written = len(rows)
    report.retracted = sum(_retract(lake, payload) for payload in deleted)
    lake.append("webhook_inbox", marks)
    if people is not None and people.listed:
        report.healed = reconcile.heal(lake, people)
    return report


def _mark(item: dict, kind: str, **fields: Any) -> dict:
    return {"delivery_id": item["delivery_id"], "kind": kind, "source": SOURCE, "created_at": S.now(), **fields}


def _deleted_ids(payload: dict) -> list[int]:
    annotations = payload.get("annotations")
    if not isinstance(annotations, list) or not all(isinstance(a, dict) and isinstance(a.get("id"), int)
                                                    for a in annotations):
        raise InvalidPayload(f"{DELETED} needs annotations: a list of objects with an integer id")
    return [a["id"] for a in annotations]


def _retract(lake: Lake, payload: dict) -> int:
    ids = _deleted_ids(payload)
    project = payload.get("project")
    project_id = project.get("id") if isinstance(project, dict) else None
    live = [row for row in lake.sql("SELECT * FROM annotations_current WHERE list_contains(?, ls_annotation_id)",
                                    [ids]).to_pylist()
            if project_id is None or row["ls_project_id"] == project_id]
    if live:
        lake.append("annotations", [reconcile.retraction(row) for row in live])
    return len(live)


def _episode_id(payload: Any) -> str | None:
    try:
        value = payload["task"]["data"]["episode_id"]
    except (KeyError, TypeError):
        return None
    return value if isinstance(value, str) else None


_STOPPING = threading.Event()
_RUNNING: set[Ingestor] = set()


@atexit.register
def _stop_all(timeout: float = 10.0) -> None:
    """At exit, let a drain in progress finish (the inbox keeps anything not yet ingested)."""
    _STOPPING.set()
    for ingestor in list(_RUNNING):
        ingestor._wake.set()
        thread = ingestor._thread
        if thread is not None:
            thread.join(timeout)


class Ingestor:
    """Drains a lake's inbox in one background thread: at once when kicked, then until idle."""

    def __init__(self, lake_uri: str, storage_options: dict[str, str] | None = None, *, idle_s: float = IDLE_S,
                 delay_s: float | None = None):
        self.lake_uri, self.storage_options, self.idle_s = lake_uri, storage_options, idle_s
        if delay_s is None:
            delay_s = float(os.environ.get("PHONELOOP_WEBHOOK_INGEST_DELAY_S", COALESCE_S))
        self.delay_s = delay_s
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.last: DrainReport | None = None
        self.drained = threading.Event()  # set after each drain (tests wait on it)

    def kick(self) -> None:
        with self._lock:
            self._wake.set()
            if self._thread is None and not _STOPPING.is_set():
                _RUNNING.add(self)
                self._thread = threading.Thread(target=self._run, name="phoneloop-webhook-ingest", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            woke = self._wake.wait(self.idle_s)
            with self._lock:
                if _STOPPING.is_set() or not (woke or self._wake.is_set()):
                    self._thread = None
                    _RUNNING.discard(self)
                    return
            if self.delay_s:
                _STOPPING.wait(self.delay_s)
                if _STOPPING.is_set():
                    continue
            self._wake.clear()
            try:
                self.last = drain(Lake.open(self.lake_uri, storage_options=self.storage_options))
            except Exception as exc:  # a background worker must outlive one failed drain; the next kick retries
                log.error("webhook ingest of %s failed: %s", self.lake_uri, exc)
            self.drained.set()
