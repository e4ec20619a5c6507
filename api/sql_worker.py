"""The child process that runs one user SELECT (``python -m api.sql_worker``); api/sql.py starts it.

It imports what it needs before reading its first request, so a worker started ahead of time
answers without paying for the imports, and it serves request after request (the server's
``WorkerPool`` hands it back after each): starting a process and importing DuckDB and Arrow
costs 1-3 s on a loaded machine, more than most queries.

It reads one JSON request per line on stdin ``{uri, storage_options, query, limits, caps}``, caps the
growth of its data segment (``RLIMIT_DATA`` = what the imports held when the worker started +
``caps.process_mb``: an allocation past it fails inside DuckDB as an out-of-memory error instead
of growing the process; memory an earlier query left behind counts against the cap), opens the lake's read-only connection
with the DuckDB limits, and streams the result to stdout as an Arrow IPC stream, in batches of
``caps.batch_rows`` rows, stopping once ``caps.rows`` rows or ``caps.bytes`` Arrow bytes are sent.
It writes ``ready`` on stderr once the connection is open (the parent's timeout starts there);
each request ends with a status line on stderr, ``status `` + JSON: ``{"truncated": null|"rows"|"bytes",
"types": [DuckDB type, ...], "retire": bool}`` or ``{"error": kind, "message": text, "retire": bool}``;
stdout carries exactly one Arrow stream per request (an empty one on failure). A worker
retires (exits after its status) after a memory failure, when a query left more than half its
cap behind, or after ``MAX_QUERIES``. Nothing here parses or trusts the query: the parent checked
it is one SELECT, and the connection cannot touch files.
"""

from __future__ import annotations

import json
import resource
import sys

STATUS = "status "  # the prefix of the status line that ends each request on stderr
MAX_QUERIES = 200  # a worker serves at most this many queries, then exits (the pool starts another)


def _cap_memory(base: int, process_mb: int) -> None:
    """Let the data segment grow by at most ``process_mb`` past ``base`` (what the imports hold,
    measured once when the worker started: memory a query left behind counts against the next
    one, never the other way). What the imports hold is mostly reserved address space
    (``pyarrow.dataset`` alone reserves ~1 GB of thread stacks and arenas it does not touch), so
    the cap counts from it rather than from zero. Only the soft limit is set, so a reused worker
    can apply each request's cap."""
    limit = base + (process_mb << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


def _data_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) << 10
    return 0


def _stream(request: dict) -> dict:
    """Run one request; always writes exactly one Arrow IPC stream to stdout (empty on failure)."""
    import duckdb
    import pyarrow as pa

    from datalake.lake import Lake

    caps = request["caps"]
    out = sys.stdout.buffer
    try:
        lake = Lake.open(request["uri"], storage_options=request.get("storage_options") or None)
        con = lake.readonly_connection(request["limits"])
    except Exception as exc:  # noqa: BLE001  (any failure to open is the request's answer, not the worker's end)
        _empty(out)
        return {"error": "failed", "message": f"cannot open the lake: {exc}"[:2000]}
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    try:
        relation = con.sql(request["query"])
        types = [str(t) for t in relation.types]
        reader = relation.to_arrow_reader(caps["batch_rows"])
    except duckdb.OutOfMemoryException as exc:
        _empty(out)
        return {"error": "memory", "message": str(exc)[:2000]}
    except duckdb.Error as exc:
        _empty(out)
        return {"error": "failed", "message": str(exc)[:2000]}
    rows = size = 0
    truncated = None
    try:
        with pa.ipc.new_stream(out, reader.schema) as writer:
            try:
                for batch in reader:
                    if rows + batch.num_rows > caps["rows"]:
                        batch, truncated = batch.slice(0, caps["rows"] - rows), "rows"
                    keep = _fits(batch, caps["bytes"] - size)
                    if keep < batch.num_rows:
                        batch, truncated = batch.slice(0, keep), "bytes"
                    if batch.num_rows:
                        writer.write_batch(batch)
                        rows, size = rows + batch.num_rows, size + batch.nbytes
                    if truncated:
                        break
                else:
                    truncated = None
            except (duckdb.OutOfMemoryException, MemoryError, pa.ArrowMemoryError) as exc:
                return {"error": "memory", "message": str(exc)[:2000]}
            except (duckdb.Error, pa.ArrowException, OSError) as exc:
                message = str(exc)
                kind = "memory" if "Out of Memory" in message or "failed to allocate" in message else "failed"
                return {"error": kind, "message": message[:2000]}
        if truncated is None and rows == caps["rows"]:  # exactly the cap: was there more?
            truncated = "rows" if next(iter(reader), None) is not None else None
    finally:
        out.flush()
        con.close()
    return {"truncated": truncated, "rows": rows, "bytes": size, "types": types}


def _empty(out) -> None:
    import pyarrow as pa

    with pa.ipc.new_stream(out, pa.schema([])):
        pass
    out.flush()


def _fits(batch, budget: int) -> int:
    """How many leading rows of ``batch`` fit in ``budget`` Arrow bytes."""
    if batch.nbytes <= budget:
        return batch.num_rows
    keep = 0
    for i in range(batch.num_rows):
        one = batch.slice(i, 1)
        budget -= sum(_sliced_bytes(column) for column in one.columns)
        if budget < 0:
            break
        keep += 1
    return keep


def _sliced_bytes(array) -> int:
    """Bytes one sliced row holds (``nbytes`` of a slice counts the whole buffer for some types)."""
    import pyarrow as pa

    return pa.concat_arrays([array]).nbytes if isinstance(array, pa.Array) else array.nbytes


def main() -> int:
    import gc

    import duckdb  # noqa: F401  (imported before the request arrives: a warm worker has paid for them)
    import pyarrow as pa
    import pyarrow.dataset  # noqa: F401  (the lake's tables are registered as Arrow datasets: ~1 s to import)

    import datalake.lake  # noqa: F401

    base = _data_bytes()
    for served in range(1, MAX_QUERIES + 1):
        line = sys.stdin.readline()
        if not line.strip():  # the server went away (or closed our stdin: retired)
            return 0
        request = json.loads(line)
        process_mb = request["caps"]["process_mb"]
        _cap_memory(base, process_mb)
        try:
            status = _stream(request)
        except MemoryError:
            status = {"error": "memory", "message": "the SQL worker ran out of memory"}
        gc.collect()
        pa.default_memory_pool().release_unused()
        # retire after a memory failure, when a query left much behind, or after MAX_QUERIES
        status["retire"] = (status.get("error") == "memory" or served == MAX_QUERIES
                            or _data_bytes() - base > (process_mb << 20) // 2)
        sys.stdout.flush()
        sys.stderr.write("\n" + STATUS + json.dumps(status) + "\n")
        sys.stderr.flush()
        if status["retire"]:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
