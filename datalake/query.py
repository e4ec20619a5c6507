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
- ``annotations_current``: the annotations that count now (newest version of each
  Label Studio annotation; healed and retracted rows left out)
- ``steps_resolved``: steps with the human correction applied (rule below)
- ``episodes_resolved``: episodes with the human verdict applied (same rule):
  ``outcome``/``verified_by`` after judgement, plus the recorded ones and
  ``human_rejected``. Downstream (curation, eval, viewer) reads these two.
- ``<table>_raw``: the stored rows, for audits
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
from deltalake import DeltaTable

from datalake import schema as S

# The annotations that count now (view ``annotations_current``): one row per Label Studio
# annotation, its newest saved version (by Label Studio's updated_at, else created_at);
# rows another row ``replaces`` (a healed identity) and every version of an annotation
# that was retracted (deleted in Label Studio; the retraction row has status
# ``retracted``) are left out. Rows from elsewhere (no label-studio origin) count each.
ANNOTATIONS_CURRENT = """
    SELECT * FROM annotations
    WHERE coalesce(status, '') <> 'retracted'
      AND annotation_id NOT IN (SELECT replaces FROM annotations WHERE replaces IS NOT NULL)
      AND NOT (coalesce(origin, '') LIKE 'label-studio:%'
               AND origin IN (SELECT origin FROM annotations WHERE status = 'retracted' AND origin IS NOT NULL))
    QUALIFY row_number() OVER (
        PARTITION BY CASE WHEN coalesce(origin, '') LIKE 'label-studio:%' THEN origin ELSE annotation_id END
        ORDER BY coalesce(ls_updated_at, created_at) DESC, created_at DESC, annotation_id DESC) = 1
"""

# Human judgements, one rule for steps and episodes (documented in docs/annotation.md),
# over ``annotations_current``:
#   1. a reviewer's verdict wins: the newest review row whose explicit verdict is fix or
#      reject (a review without a verdict, e.g. the pre-filled form submitted untouched,
#      is an accept, and an accept leaves the annotators' answer standing);
#   2. else the majority of annotators, each counted once by their newest row (so an
#      edit A -> B -> A counts as A); two step answers agree when they are the same
#      action with every point within 14 device px (taps a few pixels apart are one
#      vote); a row's support is the number of annotators who agree with it, and the
#      row with the most support wins (``majority``). When another answer has the same
#      support the result is a ``tie``, resolved by the declared rule: the answer of the
#      most experienced annotator (most current annotations in the lake), then the newest;
#   3. with one annotator that is simply their newest row (``latest``).
# Candidate rows are accepted annotations and review rows; time is Label Studio's
# updated_at when known, else the row's created_at.
_AGREE = ("{same_target} AND w.vote = v.vote AND ((v.vx IS NULL AND w.vx IS NULL) "
          "OR sqrt((v.vx - w.vx) ** 2 + (v.vy - w.vy) ** 2) <= {near_px})")
_JUDGEMENTS = """
    cand AS (
        SELECT *, coalesce(annotator_id, annotator, '') AS who, coalesce(ls_updated_at, created_at) AS t,
               coalesce(is_review, false) AS review
        FROM annotations_current
        WHERE target = '{target}' AND (status = 'accepted' OR coalesce(is_review, false))
    ),
    experience AS (
        SELECT coalesce(annotator_id, annotator, '') AS who, count(*) AS n FROM annotations_current GROUP BY ALL
    ),
    reviewed AS (
        SELECT * EXCLUDE (who, t, review), 'review' AS resolved_by FROM cand
        WHERE review AND coalesce(review_verdict, '') IN ('fix', 'reject')
        QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY t DESC, annotation_id DESC) = 1
    ),
    personal AS (
        SELECT * FROM cand WHERE NOT review
        QUALIFY row_number() OVER (PARTITION BY {key}, who ORDER BY t DESC, created_at DESC, annotation_id DESC) = 1
    ),
    votes AS (
        SELECT p.*, {vote} AS vote, {vx} AS vx, {vy} AS vy, coalesce(x.n, 0) AS experience
        FROM personal p LEFT JOIN experience x USING (who)
    ),
    agreeing AS (
        SELECT v.annotation_id, count(*) AS support, max(w.experience) AS best_experience
        FROM votes v JOIN votes w ON """ + _AGREE + """
        GROUP BY v.annotation_id
    ),
    tallied AS (
        SELECT v.*, g.support, g.best_experience, count(*) OVER (PARTITION BY {key}) AS voters
        FROM votes v JOIN agreeing g USING (annotation_id)
    ),
    winners AS (
        SELECT * FROM tallied
        QUALIFY row_number() OVER (PARTITION BY {key}
                                   ORDER BY support DESC, best_experience DESC, t DESC, annotation_id DESC) = 1
    ),
    majority AS (
        SELECT v.* EXCLUDE (who, t, review, vote, vx, vy, experience, support, best_experience, voters),
               CASE WHEN v.voters = 1 THEN 'latest'
                    WHEN EXISTS (SELECT 1 FROM tallied w WHERE {same_target} AND w.support = v.support
                                 AND w.annotation_id <> v.annotation_id
                                 AND NOT (""" + _AGREE + """)) THEN 'tie'
                    ELSE 'majority' END AS resolved_by,
               v.voters AS annotators
        FROM winners v
    ),
    judged AS (
        SELECT * FROM reviewed
        UNION ALL BY NAME
        SELECT m.* FROM majority m ANTI JOIN reviewed r USING ({key})
    )
"""

NEAR_PX = 14  # two corrected points this close (device px) are the same answer
_ACTION_FIELDS = ("type", "text", "key", "direction", "status", "app", "command", "name", "seconds")
_STEP_VOTE = ("CASE WHEN action_json IS NOT NULL THEN concat_ws('|', "
              + ", ".join(f"coalesce(json_extract_string(action_json, '$.{f}'), '')" for f in _ACTION_FIELDS)
              + ") WHEN step_correct = false THEN '__incorrect__' ELSE '__recorded__' END")
_POINT = "try_cast(json_extract(action_json, '$.{}') AS DOUBLE)"
_STEP_RULE = dict(target="step", key="episode_id, step_index", answer="action_json", vote=_STEP_VOTE,
                  vx=_POINT.format("x"), vy=_POINT.format("y"), near_px=NEAR_PX,
                  same_target="w.episode_id = v.episode_id AND w.step_index = v.step_index")
_EPISODE_RULE = dict(target="episode", key="episode_id", answer="outcome", vote="coalesce(outcome, '')",
                     vx="NULL::DOUBLE", vy="NULL::DOUBLE", near_px=NEAR_PX, same_target="w.episode_id = v.episode_id")

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
    "steps_resolved": "WITH " + _JUDGEMENTS.format(**_STEP_RULE) + """
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
               a.action_json IS NOT NULL AS corrected,
               a.resolved_by
        FROM steps s
        LEFT JOIN judged a ON a.episode_id = s.episode_id AND a.step_index = s.step_index
    """,
    "episodes_resolved": "WITH " + _JUDGEMENTS.format(**_EPISODE_RULE) + """
        SELECT e.* REPLACE (
                   coalesce(j.outcome, e.outcome) AS outcome,
                   CASE WHEN j.outcome IS NOT NULL THEN 'human' ELSE e.verified_by END AS verified_by),
               e.outcome AS recorded_outcome,
               e.verified_by AS recorded_verified_by,
               j.outcome AS human_outcome,
               j.annotation_id AS judgement_id,
               j.resolved_by,
               coalesce(j.outcome = 'failure', false) AS human_rejected
        FROM episodes e
        LEFT JOIN (SELECT * FROM judged WHERE outcome IS NOT NULL) j ON j.episode_id = e.episode_id
    """,
}

# v1 rows have no purpose: episodes recorded by an evaluation (meta.eval_id) are eval.
_PURPOSE = ("coalesce(purpose, CASE WHEN json_extract_string(meta_json, '$.eval_id') IS NOT NULL "
            "THEN 'eval' ELSE 'train' END) AS purpose")

_RAW = ("episodes", "steps")


def connect(tables: dict[str, DeltaTable | None], *, read_only: bool = False,
            limits: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the lake's views over the given snapshots.

    ``read_only=True`` is for SQL from users (the HTTP API): every table is registered
    as an Arrow dataset, then file system access is switched off and the configuration
    locked, so ``COPY``, ``ATTACH``, ``INSTALL``/``LOAD`` and ``read_csv('/etc/passwd')``
    fail while the views still answer. Parsing "one SELECT statement" is the caller's job.
    ``limits`` are DuckDB settings applied before the lock (e.g. ``{"memory_limit": "256MB"}``).
    """
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute("SET parquet_metadata_cache = true")
    for name, schema in S.TABLES.items():
        view = f"{name}_raw" if name in _RAW else name
        _register(con, view, tables.get(name), schema, arrow_only=read_only)
    unique = con.execute("SELECT count(*) = count(DISTINCT episode_id) FROM episodes_raw").fetchone()[0]
    if unique:
        steps = RESOLVED_VIEWS["steps_by_batch"] if read_only else _committed_steps(con, tables.get("steps"))
        con.execute(f"CREATE VIEW episodes AS SELECT * REPLACE ({_PURPOSE}) FROM episodes_raw")
        con.execute(f"CREATE VIEW steps AS {steps}")
    else:
        con.execute(f"CREATE VIEW episodes AS SELECT * REPLACE ({_PURPOSE}) FROM ({RESOLVED_VIEWS['episodes']})")
        con.execute(f"CREATE VIEW steps AS {RESOLVED_VIEWS['steps']}")
    con.execute(f"CREATE VIEW annotations_current AS {ANNOTATIONS_CURRENT}")
    for name in ("steps_resolved", "episodes_resolved"):
        con.execute(f"CREATE VIEW {name} AS {RESOLVED_VIEWS[name]}")
    for name, value in (limits or {}).items():
        if name not in ("memory_limit", "threads", "max_temp_directory_size"):
            raise ValueError(f"not a DuckDB limit this lake sets: {name!r}")
        con.execute(f"SET {name} = ?", [value])
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
    """A view with exactly ``schema``'s columns: columns that files written before a
    migration lack (or that an older lake's table lacks) read as NULL."""
    files = None if arrow_only else _local_files(dt)
    if files:
        source = _parquet(files)
    else:
        data = dt.to_pyarrow_dataset() if dt is not None and dt.file_uris() else None
        if data is None:
            data = schema.empty_table()
        con.register(f"__{view}_arrow", data)
        source = f"__{view}_arrow"
    con.execute(f"CREATE VIEW {view} AS {_conform(con, source, schema)}")


def _conform(con: duckdb.DuckDBPyConnection, source: str, schema: pa.Schema) -> str:
    """SELECT over ``source`` (a table expression) giving ``schema``'s columns, NULL where absent."""
    present = {row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    if all(f.name in present for f in schema):
        return f"SELECT * FROM {source}"
    columns = ", ".join(f'"{f.name}"' if f.name in present else f'NULL::{_duck_type(f.type)} AS "{f.name}"'
                        for f in schema)
    return f"SELECT {columns} FROM {source}"


_DUCK_TYPES = {pa.string(): "VARCHAR", pa.float64(): "DOUBLE", pa.int64(): "BIGINT", pa.int32(): "INTEGER",
               pa.int16(): "SMALLINT", pa.bool_(): "BOOLEAN", pa.binary(): "BLOB"}


def _duck_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMPTZ" if arrow_type.tz else "TIMESTAMP"
    return _DUCK_TYPES[arrow_type]


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
    parts = [_conform(con, _parquet(whole), S.STEPS)] if whole else []
    if mixed:
        parts.append(f"SELECT * FROM ({_conform(con, _parquet(mixed), S.STEPS)}) "
                     "WHERE batch_id IN (SELECT batch_id FROM episodes_raw)")
    return " UNION ALL BY NAME ".join(parts) if parts else "SELECT * FROM steps_raw WHERE false"
