"""Read-only SQL for people over HTTP: one SELECT, bounded in rows, bytes, time and memory.

Layers, each enough on its own for some attacks:
1. ``duckdb.extract_statements`` must find exactly one statement, of type SELECT
   (``COPY``, ``ATTACH``, ``INSTALL``/``LOAD``, ``PRAGMA``, ``SET``, writes and
   ``a; b`` are refused before anything runs);
2. the statement runs on ``Lake.readonly_connection()``: a fresh in-memory DuckDB
   connection whose tables are Arrow datasets, with external access off and the
   configuration locked, so ``read_csv('/etc/passwd')`` fails inside a SELECT too;
3. it runs in a child process (``api/sql_worker.py``, reused from query to query by
   ``WorkerPool``: a fresh process per query cost 2-3.5 s here), never in the server: DuckDB's
   ``memory_limit`` bounds its buffer-managed memory (joins, sorts, aggregates) with no
   spilling (``max_temp_directory_size`` 0), but not the strings of a vector being computed
   (``repeat('x', 1000000)`` over one 1000-row chunk is 1 GB whatever the limit), so the child's
   data segment is capped too (``RLIMIT_DATA``, ``process_mb``): past it the query fails
   with "needs more memory", and the server's own memory does not move;
4. the result streams back in Arrow batches and stops at ``row_limit`` rows or ``max_bytes``
   bytes, whichever comes first (``truncated`` says so and ``truncated_by`` says which); the
   child stops computing there. A watchdog kills the child ``timeout_s`` after it has opened
   the lake (starting a process on a busy machine is not the query's time);
5. ``QueryGate`` caps how many queries run at once (the next one is told to retry: 429), so
   the memory all queries can take is ``sql_max_concurrent * process_mb``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import duckdb
import pyarrow as pa

from api.errors import SqlFailed, SqlRejected, SqlTimeout, TooManyQueries


READY = b"ready\n"  # what api/sql_worker.py writes on stderr once its connection is open
STATUS = b"status "  # the prefix of the line that ends each request on its stderr (api.sql_worker.STATUS)
STARTUP_S = 60.0  # a child that cannot open the lake in this long is killed


class QueryGate:
    """At most ``limit`` queries at once; one more raises TooManyQueries instead of queueing."""

    def __init__(self, limit: int):
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def __enter__(self) -> QueryGate:
        if not self._slots.acquire(blocking=False):
            raise TooManyQueries(f"{self.limit} SQL queries are already running; retry shortly")
        return self

    def __exit__(self, *exc) -> None:
        self._slots.release()


@dataclass(frozen=True)
class SqlLimits:
    row_limit: int = 1000  # most rows returned
    max_bytes: int = 16 << 20  # most bytes returned (Arrow bytes of the rows; bytes base64-encode to 4/3)
    timeout_s: float = 5.0  # the child is killed past this
    memory_mb: int = 512  # DuckDB memory_limit
    process_mb: int = 1024  # the child's data segment (RLIMIT_DATA): Python, Arrow and DuckDB together
    threads: int = 2
    batch_rows: int = 64  # rows per streamed batch: what the child computes ahead of the caps


@dataclass(frozen=True)
class SqlResult:
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool
    truncated_by: str | None = None  # "rows" | "bytes" | None
    bytes: int = 0


def parse_one_select(query: str) -> str:
    """The query's only statement, if it is a SELECT; raises SqlRejected otherwise."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise SqlFailed(f"query does not parse: {exc}") from None
    if len(statements) != 1:
        raise SqlRejected(f"send exactly one statement (got {len(statements)})")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        raise SqlRejected(f"only SELECT statements are allowed (got {statement.type.name})")
    return statement.query.strip().rstrip(";")


class WorkerPool:
    """Children of ``api/sql_worker.py``, reused: ``take()`` hands out an idle one (imports done,
    waiting for a request) or starts one, and ``give()`` takes it back after its query, keeping
    at most ``keep`` idle (one per query that may run at once). A child that was killed (timeout),
    failed for memory, or retired itself is never given back. ``warm`` children are started
    ahead after the first query (a server nobody queries holds no idle child); an idle child
    exits when the server does (its stdin closes)."""

    def __init__(self, warm: int = 1, keep: int = 4):
        self.warm, self.keep = warm, max(keep, warm)
        self._idle: list[subprocess.Popen] = []
        self._lock = threading.Lock()
        self.started = 0  # children started so far (tests and benches read it)

    def take(self) -> subprocess.Popen:
        with self._lock:
            self._idle = [c for c in self._idle if c.poll() is None]
            child = self._idle.pop() if self._idle else None
            short = len(self._idle) < self.warm
        if short and self.warm:
            threading.Thread(target=self._refill, daemon=True).start()
        return child or self.start()

    def start(self) -> subprocess.Popen:
        with self._lock:
            self.started += 1
        return start_worker()

    def give(self, child: subprocess.Popen) -> None:
        with self._lock:
            if child.poll() is None and len(self._idle) < self.keep:
                self._idle.append(child)
                return
        _stop(child)

    def _refill(self) -> None:
        child = self.start()
        with self._lock:
            if len(self._idle) < self.warm:
                self._idle.append(child)
                return
        _stop(child)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for child in idle:
            _stop(child)


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is None:
        try:
            child.stdin.close()  # an idle worker exits on an empty line / EOF
            child.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()


def start_worker() -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen([sys.executable, "-m", "api.sql_worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def run_bounded(uri: str, storage_options: dict | None, query: str, limits: SqlLimits,
                pool: WorkerPool | None = None) -> SqlResult:
    """Run one SELECT over the lake at ``uri`` in a child process under ``limits`` (module docstring);
    the child comes from ``pool`` when given (reused, and handed back after a clean answer),
    else is started now and ends after it."""
    sql = parse_one_select(query)
    request = {"uri": uri, "storage_options": storage_options, "query": sql,
               "limits": {"memory_limit": f"{limits.memory_mb}MB", "threads": str(limits.threads),
                          "max_temp_directory_size": "0B"},
               "caps": {"rows": limits.row_limit, "bytes": limits.max_bytes, "process_mb": limits.process_mb,
                        "batch_rows": limits.batch_rows}}
    child = pool.take() if pool is not None else start_worker()
    ready, done, timed_out, answered = (threading.Event() for _ in range(4))
    errors: list[bytes] = []
    status: dict[str, Any] = {}

    def drain() -> None:  # the child says "ready" once the lake is open, then ends the request with its status
        for line in child.stderr:
            if line == READY and not ready.is_set():
                ready.set()
            elif line.startswith(STATUS):
                status.update(_status(line[len(STATUS):]))
                answered.set()
                return
            else:
                errors.append(line)

    def watchdog() -> None:  # the timeout counts from "ready": starting a process is not the query's time
        if not ready.wait(STARTUP_S) and not done.is_set():
            child.kill()
        elif not done.wait(limits.timeout_s):
            timed_out.set()
            child.kill()

    threads = [threading.Thread(target=drain, daemon=True), threading.Thread(target=watchdog, daemon=True)]
    for thread in threads:
        thread.start()
    reusable = False
    try:
        child.stdin.write(json.dumps(request).encode() + b"\n")
        child.stdin.flush()
        table = _read_stream(child.stdout)
        threads[0].join()
        reusable = answered.is_set() and not timed_out.is_set() and not status.get("retire")
    except OSError:  # the child died before it read the request
        table = None
    finally:
        done.set()
        if pool is not None and reusable:
            pool.give(child)
        elif answered.is_set():
            _stop(child)
        else:
            child.kill()
            child.wait()
    if timed_out.is_set():
        raise SqlTimeout(f"query interrupted after {limits.timeout_s:g} s")
    if not answered.is_set():
        status = _status(b"".join(errors))
    if status.get("error") == "memory":
        raise SqlFailed(f"query needs more memory than the per-query limit ({limits.memory_mb} MB in DuckDB, "
                        f"{limits.process_mb} MB in all: PHONELOOP_SQL_MEMORY_MB, PHONELOOP_SQL_PROCESS_MB)")
    if "error" in status:
        raise SqlFailed(f"query failed: {status['message']}")
    if table is None or not answered.is_set():
        raise SqlFailed(f"the SQL worker stopped without a result (exit {child.poll()})")
    return _result(table, status, limits.max_bytes)


def _read_stream(out) -> pa.Table | None:
    try:
        return pa.ipc.open_stream(out).read_all()
    except (pa.ArrowInvalid, OSError):
        return None


def _status(stderr: bytes) -> dict[str, Any]:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else {}
    except ValueError:
        return {"error": "failed", "message": lines[-1][:2000]}


def _result(table: pa.Table, status: dict[str, Any], max_bytes: int) -> SqlResult:
    """The rows as JSON values, cut again where their JSON text passes ``max_bytes``."""
    rows, size, truncated_by = [], 0, status.get("truncated")
    for row in table.to_pylist():
        values = [jsonable(v) for v in row.values()]
        size += len(json.dumps(values, ensure_ascii=False, default=str))
        if size > max_bytes:
            truncated_by = "bytes"
            break
        rows.append(values)
    return SqlResult(columns=table.column_names, types=status.get("types") or [str(t) for t in table.schema.types], rows=rows,
                     truncated=truncated_by is not None, truncated_by=truncated_by, bytes=size)


def jsonable(value: Any) -> Any:
    """A JSON-compatible form of a DuckDB value (bytes become base64 strings)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)
