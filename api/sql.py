"""Read-only SQL for people over HTTP: one SELECT, a row limit, a timeout, no file access.

Layers, each enough on its own for some attacks:
1. ``duckdb.extract_statements`` must find exactly one statement, of type SELECT
   (``COPY``, ``ATTACH``, ``INSTALL``/``LOAD``, ``PRAGMA``, ``SET``, writes and
   ``a; b`` are refused before anything runs);
2. the statement runs on ``Lake.readonly_connection()``: a fresh in-memory DuckDB
   connection whose tables are Arrow datasets, with external access off and the
   configuration locked, so ``read_csv('/etc/passwd')`` fails inside a SELECT too;
3. at most ``row_limit`` rows are fetched (``truncated`` says whether more existed),
   and a timer interrupts the connection after ``timeout_s``;
4. the connection has a memory limit (a query needing more fails, the server does not
   grow), and ``QueryGate`` caps how many queries run at once (the next one is told to
   retry: 429).
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import duckdb

from api.errors import SqlFailed, SqlRejected, SqlTimeout, TooManyQueries


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
class SqlResult:
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool


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


def run_readonly(con: duckdb.DuckDBPyConnection, query: str, *, row_limit: int, timeout_s: float) -> SqlResult:
    """Run one SELECT on a read-only connection (see the module docstring); closes ``con``."""
    sql = parse_one_select(query)
    timed_out = threading.Event()

    def interrupt() -> None:
        timed_out.set()
        con.interrupt()

    timer = threading.Timer(timeout_s, interrupt)
    timer.start()
    try:
        cursor = con.execute(sql)
        rows = cursor.fetchmany(row_limit + 1)
        description = cursor.description or []
    except duckdb.Error as exc:
        if timed_out.is_set():
            raise SqlTimeout(f"query interrupted after {timeout_s:g} s") from None
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise SqlFailed("query needs more memory than the per-query limit (PHONELOOP_SQL_MEMORY_MB)") from None
        raise SqlFailed(f"query failed: {str(exc)[:2000]}") from None
    finally:
        timer.cancel()
        con.close()
    return SqlResult(columns=[d[0] for d in description], types=[str(d[1]) for d in description],
                     rows=[[jsonable(v) for v in row] for row in rows[:row_limit]],
                     truncated=len(rows) > row_limit)


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
