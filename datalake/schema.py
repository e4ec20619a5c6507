"""Table schemas of lake schema v1 and the lake's marker file.

Every table lives at ``<lake>/tables/<name>`` as a Delta table. The marker
``<lake>/phoneloop.json`` records the schema version; a lake written by a newer
phoneloop (a higher version) is refused rather than misread.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.fs as pafs

from datalake.errors import LakeNotFound, TableNotFound, UnsupportedSchemaVersion

SCHEMA_VERSION = 1
MARKER = "phoneloop.json"

_TS = pa.timestamp("us", tz="UTC")

EPISODES = pa.schema([
    pa.field("episode_id", pa.string(), nullable=False),
    pa.field("batch_id", pa.string(), nullable=False),  # the write that committed it
    pa.field("batch_seq", pa.int32(), nullable=False),  # position in that write (keeps import order)
    pa.field("instruction", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("app", pa.string()),
    pa.field("category", pa.string()),
    pa.field("task", pa.string()),
    pa.field("phone", pa.string(), nullable=False),  # real | mock
    pa.field("device_width", pa.int32(), nullable=False),
    pa.field("device_height", pa.int32(), nullable=False),
    pa.field("device_json", pa.string(), nullable=False),  # the full device object
    pa.field("outcome", pa.string(), nullable=False),
    pa.field("verified_by", pa.string(), nullable=False),
    pa.field("policy", pa.string()),
    pa.field("round", pa.int32()),
    pa.field("num_steps", pa.int32(), nullable=False),
    pa.field("meta_json", pa.string()),
    pa.field("created_at", _TS, nullable=False),
])

STEPS = pa.schema([
    pa.field("episode_id", pa.string(), nullable=False),
    pa.field("batch_id", pa.string(), nullable=False),
    pa.field("step_index", pa.int32(), nullable=False),
    pa.field("frame_sha", pa.string(), nullable=False),
    pa.field("frame_width", pa.int32(), nullable=False),
    pa.field("frame_height", pa.int32(), nullable=False),
    pa.field("ui_tree", pa.string()),
    pa.field("package", pa.string()),
    pa.field("activity", pa.string()),
    pa.field("action_type", pa.string(), nullable=False),
    pa.field("action_json", pa.string(), nullable=False),
    pa.field("action_version", pa.int16(), nullable=False),
    pa.field("x", pa.float64()),
    pa.field("y", pa.float64()),
    pa.field("thought", pa.string()),
    pa.field("raw_output", pa.string()),
])

FRAMES = pa.schema([
    pa.field("sha256", pa.string(), nullable=False),
    pa.field("png", pa.binary(), nullable=False),
    pa.field("width", pa.int32(), nullable=False),
    pa.field("height", pa.int32(), nullable=False),
    pa.field("nbytes", pa.int64(), nullable=False),
    pa.field("created_at", _TS, nullable=False),
])

ANNOTATIONS = pa.schema([
    pa.field("annotation_id", pa.string(), nullable=False),
    pa.field("target", pa.string(), nullable=False),  # step | episode
    pa.field("episode_id", pa.string(), nullable=False),
    pa.field("step_index", pa.int32()),
    pa.field("status", pa.string(), nullable=False),  # accepted | rejected | pending
    pa.field("action_json", pa.string()),  # the corrected action, if any
    pa.field("step_correct", pa.bool_()),
    pa.field("outcome", pa.string()),  # episode judgement, if any
    pa.field("note", pa.string()),
    pa.field("annotator", pa.string()),
    pa.field("origin", pa.string()),  # e.g. label-studio:project/task/annotation
    pa.field("created_at", _TS, nullable=False),
])

DATASETS = pa.schema([
    pa.field("name", pa.string(), nullable=False),
    pa.field("version", pa.int32(), nullable=False),
    pa.field("fingerprint", pa.string(), nullable=False),
    pa.field("recipe", pa.string(), nullable=False),
    pa.field("parents_json", pa.string()),
    pa.field("table_versions_json", pa.string(), nullable=False),
    pa.field("counts_json", pa.string()),
    pa.field("exports_json", pa.string()),
    pa.field("created_at", _TS, nullable=False),
])

MODELS = pa.schema([
    pa.field("name", pa.string(), nullable=False),
    pa.field("path", pa.string(), nullable=False),
    pa.field("base_model", pa.string(), nullable=False),
    pa.field("dataset", pa.string()),
    pa.field("dataset_fingerprint", pa.string()),
    pa.field("parent", pa.string()),
    pa.field("config_json", pa.string()),
    pa.field("metrics_json", pa.string()),
    pa.field("created_at", _TS, nullable=False),
])

QUARANTINE = pa.schema([
    pa.field("quarantine_id", pa.string(), nullable=False),
    pa.field("origin", pa.string(), nullable=False),  # file or writer that sent it
    pa.field("locator", pa.string()),  # e.g. "line 17"
    pa.field("episode_id", pa.string()),
    pa.field("reason", pa.string(), nullable=False),
    pa.field("payload", pa.binary(), nullable=False),  # the raw record, as received
    pa.field("created_at", _TS, nullable=False),
])

TABLES: dict[str, pa.Schema] = {
    "episodes": EPISODES,
    "steps": STEPS,
    "frames": FRAMES,
    "annotations": ANNOTATIONS,
    "datasets": DATASETS,
    "models": MODELS,
    "quarantine": QUARANTINE,
}


def schema_of(table: str) -> pa.Schema:
    try:
        return TABLES[table]
    except KeyError:
        raise TableNotFound(f"no table {table!r} in the lake (tables: {', '.join(TABLES)})") from None


def now() -> datetime:
    return datetime.now(timezone.utc)


def _fs(uri: str) -> tuple[pafs.FileSystem, str]:
    return pafs.FileSystem.from_uri(uri)


def write_marker(uri: str) -> None:
    fs, path = _fs(uri)
    fs.create_dir(path, recursive=True)
    body = {"format": "phoneloop-lake", "schema_version": SCHEMA_VERSION, "created_at": now().isoformat()}
    with fs.open_output_stream(f"{path}/{MARKER}") as out:
        out.write(json.dumps(body, indent=2).encode() + b"\n")


def read_marker(uri: str) -> dict:
    """The marker's content; raises LakeNotFound or UnsupportedSchemaVersion."""
    fs, path = _fs(uri)
    marker = f"{path}/{MARKER}"
    if fs.get_file_info(marker).type != pafs.FileType.File:
        raise LakeNotFound(f"no phoneloop lake at {uri} (missing {MARKER}; run `phoneloop lake init`)")
    with fs.open_input_stream(marker) as src:
        try:
            body = json.loads(src.read())
            version = int(body["schema_version"])
        except (ValueError, KeyError, TypeError) as exc:
            raise LakeNotFound(f"{uri}/{MARKER} is not a phoneloop lake marker: {exc}") from None
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersion(
            f"lake at {uri} has schema v{version}; this phoneloop reads up to v{SCHEMA_VERSION} — upgrade phoneloop"
        )
    return body
