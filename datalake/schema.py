"""Table schemas of the lake (schema v2) and the lake's marker file.

Every table lives at ``<lake>/tables/<name>`` as a Delta table. The marker
``<lake>/phoneloop.json`` records the schema version; a lake written by a newer
phoneloop (a higher version) is refused rather than misread, and a lake of an older
version opens read-only until ``phoneloop lake migrate`` upgrades it
(``datalake/migrate.py``). Columns added by a version are nullable: files written
before it simply lack them, and the query layer reads them as NULL.

Schema history:
- v1: episodes, steps, frames, annotations, datasets, models, quarantine.
- v2: ``evals`` table; episodes ``purpose`` (train | eval), ``failure_reason``,
  ``score``, ``perturbation``; steps ``meta_json`` and ``pairing`` (the recorder's
  ok | uncertain); annotations: Label Studio project/task/annotation ids, annotator
  id and email, Label Studio's created/updated times and lead time, review rows.
- v3: episodes ``instance``; evals ``suite``, ``overlap``; ``tasksets`` table.
- v4: ``import_parts`` table (the step records of a public-dataset episode that
  continues in a shard not imported yet, held until that shard is imported);
  annotations ``replaces`` (a healed identity or a retraction names the row it
  supersedes; retraction rows have status ``retracted``); ``webhook_inbox`` table (the
  webhook's durable queue: deliveries stored before they are acknowledged).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.fs as pafs

from datalake.storage import filesystem, missing_credentials

from datalake.errors import LakeError, LakeNotFound, TableNotFound, UnsupportedSchemaVersion

SCHEMA_VERSION = 4
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
    # v2
    pa.field("purpose", pa.string()),  # train | eval; NULL (v1 rows) reads as train, or eval if meta.eval_id
    pa.field("failure_reason", pa.string()),  # policy_error | device_offline | max_steps | ...
    pa.field("score", pa.float64()),  # the verifier's score, when one ran
    pa.field("perturbation", pa.string()),  # the perturbation profile the episode ran under
    # v3
    pa.field("instance", pa.string()),  # the task instance's content fingerprint (mockphone.tasks.instances)
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
    # v2
    pa.field("meta_json", pa.string()),  # step facts: pairing, tree_lag_ms, detour, original record
    pa.field("pairing", pa.string()),  # ok | uncertain (recorded demonstrations), else NULL
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
    # v2
    pa.field("ls_project_id", pa.int64()),
    pa.field("ls_task_id", pa.int64()),
    pa.field("ls_annotation_id", pa.int64()),
    pa.field("annotator_id", pa.string()),  # stable id of the person (Label Studio user id)
    pa.field("annotator_email", pa.string()),
    pa.field("is_review", pa.bool_()),  # a reviewer's verdict on other annotations
    pa.field("review_verdict", pa.string()),  # accept | fix | reject (review rows)
    pa.field("lead_time", pa.float64()),  # seconds the annotator spent (Label Studio's lead_time)
    pa.field("ls_created_at", _TS),
    pa.field("ls_updated_at", _TS),
    # v4 (issue 33)
    pa.field("replaces", pa.string()),  # the annotation_id this row supersedes (identity healed) or retracts
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

EVALS = pa.schema([  # v2: one row per (evaluation, policy)
    pa.field("eval_id", pa.string(), nullable=False),
    pa.field("name", pa.string()),
    pa.field("policy", pa.string(), nullable=False),  # identity: model+registry id, URL+model, random:SEED
    pa.field("policy_json", pa.string()),  # how the policy was built (kind, model, endpoint, options)
    pa.field("task_set", pa.string()),  # the task selector
    pa.field("seeds_json", pa.string()),
    pa.field("perturbation", pa.string()),
    pa.field("status", pa.string(), nullable=False),  # ok | failed (the policy did not run)
    pa.field("error", pa.string()),
    pa.field("episodes", pa.int32()),
    pa.field("successes", pa.int32()),
    pa.field("results_json", pa.string()),  # per episode: task, seed, episode_id, outcome, score, ...
    pa.field("summary_json", pa.string()),  # per category / app: n, successes, rate, interval
    pa.field("comparisons_json", pa.string()),  # paired comparisons with the other policies
    pa.field("round", pa.int32()),
    pa.field("loop", pa.string()),
    pa.field("created_at", _TS, nullable=False),
    # v3
    pa.field("suite", pa.string()),  # the evaluation suite (name@version) the jobs came from, if any
    pa.field("overlap", pa.int32()),  # evaluated instances whose fingerprint is in the model's training data
])

TASKSETS = pa.schema([  # v3: one row per instance of a task set or an evaluation suite version
    pa.field("name", pa.string(), nullable=False),
    pa.field("version", pa.int32(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),  # taskset | suite
    pa.field("fingerprint", pa.string(), nullable=False),
    pa.field("template", pa.string(), nullable=False),
    pa.field("seed", pa.int64(), nullable=False),
    pa.field("locale", pa.string(), nullable=False),
    pa.field("params_json", pa.string()),
    pa.field("instruction", pa.string()),
    pa.field("app", pa.string()),
    pa.field("apps", pa.string()),
    pa.field("category", pa.string()),
    pa.field("domain", pa.string()),
    pa.field("optimal_steps", pa.int32()),
    pa.field("episode_key", pa.string()),
    pa.field("parent", pa.string()),  # a suite's task set (name@version)
    pa.field("created_at", _TS, nullable=False),
])

IMPORT_PARTS = pa.schema([  # v4 (issue 32): one row per held step record of an episode spanning shards
    pa.field("dataset", pa.string(), nullable=False),  # the importer's format name (aitw)
    pa.field("episode_id", pa.string(), nullable=False),  # the lake id the episode will have
    pa.field("part", pa.int64(), nullable=False),  # the record's step number in its episode
    pa.field("origin", pa.string(), nullable=False),  # the file it was read from
    pa.field("locator", pa.string()),
    pa.field("payload", pa.binary(), nullable=False),  # the raw record, as read
    pa.field("created_at", _TS, nullable=False),
])

WEBHOOK_INBOX = pa.schema([  # v4 (issue 33): webhook deliveries, stored before they are acknowledged
    pa.field("delivery_id", pa.string(), nullable=False),  # sha256 of the body
    pa.field("kind", pa.string(), nullable=False),  # received | ingested | failed
    pa.field("source", pa.string(), nullable=False),  # e.g. label-studio
    pa.field("payload", pa.binary()),  # the body as received (received rows)
    pa.field("annotation_id", pa.string()),  # the row it became (ingested rows)
    pa.field("reason", pa.string()),  # why it could not become a row (failed rows)
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
    "evals": EVALS,
    "tasksets": TASKSETS,
    "import_parts": IMPORT_PARTS,
    "webhook_inbox": WEBHOOK_INBOX,
}


def schema_of(table: str) -> pa.Schema:
    try:
        return TABLES[table]
    except KeyError:
        raise TableNotFound(f"no table {table!r} in the lake (tables: {', '.join(TABLES)})") from None


def now() -> datetime:
    return datetime.now(timezone.utc)


def write_marker(uri: str, version: int = SCHEMA_VERSION, *, extra: dict | None = None,
                 storage_options: dict[str, str] | None = None) -> None:
    body = {"format": "phoneloop-lake", "schema_version": version, "created_at": now().isoformat(), **(extra or {})}
    try:
        fs, path = filesystem(uri, storage_options)
        fs.create_dir(path, recursive=True)
        with fs.open_output_stream(f"{path}/{MARKER}") as out:
            out.write(json.dumps(body, indent=2).encode() + b"\n")
    except (OSError, ValueError) as exc:
        raise LakeError(f"cannot write the lake marker at {uri}/{MARKER}: {_first_line(exc)}") from None


def read_marker(uri: str, storage_options: dict[str, str] | None = None) -> dict:
    """The marker's content; raises LakeNotFound or UnsupportedSchemaVersion."""
    try:
        fs, path = filesystem(uri, storage_options)
        marker = f"{path}/{MARKER}"
        if fs.get_file_info(marker).type != pafs.FileType.File:
            raise LakeNotFound(f"no phoneloop lake at {uri} (missing {MARKER}; run `phoneloop lake init`)")
        with fs.open_input_stream(marker) as src:
            raw = src.read()
    except (OSError, ValueError) as exc:  # unreachable endpoint, missing bucket, refused credentials
        hint = missing_credentials(uri, storage_options)  # else the SDK's "AWS Error UNKNOWN (HTTP status 500)"
        why = f"{hint} (the request failed: {_first_line(exc)})" if hint else _first_line(exc)
        raise LakeError(f"cannot read the lake at {uri}: {why}") from None
    try:
        body = json.loads(raw)
        version = int(body["schema_version"])
    except (ValueError, KeyError, TypeError) as exc:
        raise LakeNotFound(f"{uri}/{MARKER} is not a phoneloop lake marker: {exc}") from None
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersion(
            f"lake at {uri} has schema v{version}; this phoneloop reads up to v{SCHEMA_VERSION} — upgrade phoneloop"
        )
    return body


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
