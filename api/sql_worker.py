"""The child process that runs one user SELECT (``python -m api.sql_worker``); api/sql.py starts it.

It imports what it needs before reading its request, so a worker started ahead of time (the
server keeps one warm) answers without paying for the imports. Each worker runs one query.

It reads one JSON request on stdin ``{uri, storage_options, query, limits, caps}``, caps the
growth of its data segment (``RLIMIT_DATA`` = what the imports hold + ``caps.process_mb``: an
allocation past it fails inside DuckDB as an out-of-memory error instead of growing the process), opens the lake's read-only connection
with the DuckDB limits, and streams the result to stdout as an Arrow IPC stream, in batches of
``caps.batch_rows`` rows, stopping once ``caps.rows`` rows or ``caps.bytes`` Arrow bytes are sent.
It writes ``ready`` on stderr once the connection is open (the parent's timeout starts there);
the last line on stderr is a JSON status: ``{"truncated": null|"rows"|"bytes", "types": [DuckDB type, ...]}`` or
``{"error": kind, "message": text}``. Nothing here parses or trusts the query: the parent checked
it is one SELECT, and the connection cannot touch files.
"""

from __future__ import annotations

import json
import resource
import sys


def _cap_memory(process_mb: int) -> None:
    """Let the data segment grow by at most ``process_mb`` from here. What the imports hold is
    mostly reserved address space (``pyarrow.dataset`` alone reserves ~1 GB of thread stacks and
    arenas it does not touch), so the cap counts from it rather than from zero."""
    limit = _data_bytes() + (process_mb << 20)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _data_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmData:"):
                return int(line.split()[1]) << 10
    return 0


def _stream(request: dict) -> dict:
    import duckdb
    import pyarrow as pa

    from datalake.lake import Lake

    caps = request["caps"]
    lake = Lake.open(request["uri"], storage_options=request.get("storage_options") or None)
    con = lake.readonly_connection(request["limits"])
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    try:
        relation = con.sql(request["query"])
        types = [str(t) for t in relation.types]
        reader = relation.to_arrow_reader(caps["batch_rows"])
    except duckdb.OutOfMemoryException as exc:
        return {"error": "memory", "message": str(exc)[:2000]}
    except duckdb.Error as exc:
        return {"error": "failed", "message": str(exc)[:2000]}
    rows = size = 0
    truncated = None
    out = sys.stdout.buffer
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
    return {"truncated": truncated, "rows": rows, "bytes": size, "types": types}


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
    import duckdb  # noqa: F401  (imported before the request arrives: a warm worker has paid for them)
    import pyarrow.dataset  # noqa: F401  (the lake's tables are registered as Arrow datasets: ~1 s to import)

    import datalake.lake  # noqa: F401

    text = sys.stdin.read()
    if not text.strip():  # a warm worker whose server went away
        return 0
    request = json.loads(text)
    _cap_memory(request["caps"]["process_mb"])
    try:
        status = _stream(request)
    except MemoryError:
        status = {"error": "memory", "message": "the SQL worker ran out of memory"}
    sys.stdout.flush()
    sys.stderr.write("\n" + json.dumps(status) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
