"""The DuckDB side of the lake: one view per Delta table, plus the resolving views.

Local tables are read with ``read_parquet`` over the snapshot's file list (3-4x
faster than scanning an Arrow dataset); remote tables (s3://, ...) and empty tables
are registered as Arrow datasets. No DuckDB extension is ever downloaded.

Views:
- ``episodes``: committed episodes, first commit wins if an id was written twice
- ``steps``: steps whose (episode_id, batch_id) belongs to a visible episode, so a
  writer that died between its steps and episodes commits leaves nothing visible.
  When every episode id is unique (the normal case) this is decided per file from
  the Delta log's min/max of ``batch_id``: a file of one committed batch is read
  whole, a file of an uncommitted batch is skipped, and only mixed files (after
  compaction) are filtered row by row.
- ``frames``, ``annotations``, ``datasets``, ``models``, ``quarantine``: as stored
- ``steps_resolved``: steps with the latest accepted step annotation applied
- ``<table>_raw``: the stored rows, for audits
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from deltalake import DeltaTable

from datalake import schema as S

RESOLVED_VIEWS = {
    "episodes": """
        SELECT * FROM episodes_raw
        QUALIFY row_number() OVER (PARTITION BY episode_id ORDER BY created_at, batch_id) = 1
    """,
    "steps": """
        SELECT s.* FROM steps_raw s
        SEMI JOIN episodes e ON s.episode_id = e.episode_id AND s.batch_id = e.batch_id
    """,
    "steps_by_batch": "SELECT * FROM steps_raw WHERE batch_id IN (SELECT batch_id FROM episodes_raw)",
    "steps_resolved": """
        WITH latest AS (
            SELECT * FROM annotations
            WHERE target = 'step' AND status = 'accepted'
            QUALIFY row_number() OVER (
                PARTITION BY episode_id, step_index ORDER BY created_at DESC, annotation_id DESC) = 1
        )
        SELECT s.* REPLACE (
                   coalesce(json_extract_string(a.action_json, '$.type'), s.action_type) AS action_type,
                   coalesce(a.action_json, s.action_json) AS action_json,
                   CASE WHEN a.action_json IS NULL THEN s.x
                        ELSE try_cast(json_extract(a.action_json, '$.x') AS DOUBLE) END AS x,
                   CASE WHEN a.action_json IS NULL THEN s.y
                        ELSE try_cast(json_extract(a.action_json, '$.y') AS DOUBLE) END AS y),
               s.action_json AS recorded_action_json,
               a.annotation_id,
               a.step_correct,
               a.action_json IS NOT NULL AS corrected
        FROM steps s
        LEFT JOIN latest a ON a.episode_id = s.episode_id AND a.step_index = s.step_index
    """,
}

_RAW = ("episodes", "steps")


def connect(tables: dict[str, DeltaTable | None], *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the lake's views over the given snapshots.

    ``read_only=True`` is for SQL from users (the HTTP API): every table is registered
    as an Arrow dataset, then file system access is switched off and the configuration
    locked, so ``COPY``, ``ATTACH``, ``INSTALL``/``LOAD`` and ``read_csv('/etc/passwd')``
    fail while the views still answer. Parsing "one SELECT statement" is the caller's job.
    """
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute("SET parquet_metadata_cache = true")
    for name, schema in S.TABLES.items():
        view = f"{name}_raw" if name in _RAW else name
        _register(con, view, tables.get(name), schema, arrow_only=read_only)
    unique = con.execute("SELECT count(*) = count(DISTINCT episode_id) FROM episodes_raw").fetchone()[0]
    if unique:
        steps = RESOLVED_VIEWS["steps_by_batch"] if read_only else _committed_steps(con, tables.get("steps"))
        con.execute("CREATE VIEW episodes AS SELECT * FROM episodes_raw")
        con.execute(f"CREATE VIEW steps AS {steps}")
    else:
        for name in ("episodes", "steps"):
            con.execute(f"CREATE VIEW {name} AS {RESOLVED_VIEWS[name]}")
    con.execute(f"CREATE VIEW steps_resolved AS {RESOLVED_VIEWS['steps_resolved']}")
    if read_only:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


def _parquet(files: list[str]) -> str:
    listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    return f"read_parquet([{listing}], union_by_name = true)"


def _local_files(dt: DeltaTable | None) -> list[str] | None:
    """The snapshot's files if they are all local paths (readable by read_parquet)."""
    files = dt.file_uris() if dt is not None else []
    return files if files and all(f.startswith("/") for f in files) else None


def _register(con: duckdb.DuckDBPyConnection, view: str, dt: DeltaTable | None, schema: pa.Schema,
              arrow_only: bool = False) -> None:
    files = None if arrow_only else _local_files(dt)
    if files:
        con.execute(f"CREATE VIEW {view} AS SELECT * FROM {_parquet(files)}")
        return
    source = dt.to_pyarrow_dataset() if dt is not None and dt.file_uris() else schema.empty_table()
    con.register(f"__{view}_arrow", source)
    con.execute(f"CREATE VIEW {view} AS SELECT * FROM __{view}_arrow")


def _committed_steps(con: duckdb.DuckDBPyConnection, dt: DeltaTable | None) -> str:
    """SQL for the steps of committed batches, pruned per file where the log's stats allow."""
    row_filter = RESOLVED_VIEWS["steps_by_batch"]
    files = _local_files(dt)
    if not files:
        return row_filter
    committed = {row[0] for row in con.execute("SELECT DISTINCT batch_id FROM episodes_raw").fetchall()}
    stats = pa.table(dt.get_add_actions(flatten=True))
    names = stats.column_names
    if "min.batch_id" not in names or "max.batch_id" not in names:
        return row_filter
    root = dt.table_uri.removeprefix("file://").rstrip("/")
    whole, mixed = [], []
    for path, lo, hi in zip(stats["path"].to_pylist(), stats["min.batch_id"].to_pylist(),
                            stats["max.batch_id"].to_pylist()):
        full = path if path.startswith("/") else f"{root}/{path}"
        if lo is not None and lo == hi and len(lo) == 32:  # one batch, stats not truncated
            if lo in committed:
                whole.append(full)
        else:
            mixed.append(full)
    parts = [f"SELECT * FROM {_parquet(whole)}"] if whole else []
    if mixed:
        parts.append(f"SELECT * FROM {_parquet(mixed)} WHERE batch_id IN (SELECT batch_id FROM episodes_raw)")
    return " UNION ALL BY NAME ".join(parts) if parts else "SELECT * FROM steps_raw WHERE false"
