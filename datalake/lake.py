"""The Lake: a small facade over Delta tables (storage), DuckDB views (queries),
the frame index (screenshots) and the episode writer.

    lake = Lake.init("./lake")              # or Lake.open("s3://bucket/lake", storage_options=...)
    lake.write_episodes([episode, ...])     # one batch = one commit per table
    lake.sql("SELECT app, count(*) FROM episodes GROUP BY app").to_pylist()
    lake.episode(episode_id), lake.frame(sha)
    old = lake.as_of({"episodes": 3, "steps": 3})   # or lake.as_of(datetime)

A ``Lake`` is cheap to create; worker processes open their own (spawn, not fork:
deltalake's writer panics in forked children).
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import duckdb
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from datalake import migrate, query, storage
from datalake import schema as S
from datalake.errors import (EpisodeNotFound, LakeError, LakeNeedsMigration, LakeNotFound, SnapshotNotFound,
                             VacuumRefused)
from datalake.frames import FrameIndex
from datalake.types import Action, Device, Episode, Observation, Step
from datalake.writer import FRAME_PROPS, ROW_PROPS, EpisodeWriter, Rejected, WriteReport

Snapshot = dict[str, int] | datetime | str


def spawn_context() -> multiprocessing.context.SpawnContext:
    """The start method every lake worker pool must use."""
    return multiprocessing.get_context("spawn")


def _no_bucket(uri: str, storage_options: dict[str, str] | None) -> None:
    """A missing bucket is named as such (not as a missing lake, nor an S3 error stack)."""
    bucket = storage.missing_bucket(uri, storage_options)
    if bucket is not None:
        raise LakeError(f"the bucket {bucket!r} of {uri} does not exist: create it first "
                        f"(e.g. `aws s3 mb s3://{bucket}`), or check AWS_ENDPOINT_URL / AWS_REGION")


class Lake:
    def __init__(self, uri: str, *, storage_options: dict[str, str] | None = None,
                 snapshot: Snapshot | None = None):
        self.uri = _normalise(uri)
        self.storage_options = storage.with_defaults(self.uri, storage_options)
        self.snapshot = snapshot
        try:
            self.meta = S.read_marker(self.uri, storage_options)
        except LakeNotFound:
            _no_bucket(self.uri, self.storage_options)
            raise
        self.schema_version = int(self.meta["schema_version"])
        self._tables: dict[str, DeltaTable] | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._frames: FrameIndex | None = None
        self._writer: EpisodeWriter | None = None

    # -- opening ----------------------------------------------------------------------
    @classmethod
    def init(cls, uri: str, *, storage_options: dict[str, str] | None = None) -> Lake:
        """Create the lake (idempotent: an existing lake is opened, its data untouched)."""
        uri = _normalise(uri)
        storage_options = storage.with_defaults(uri, storage_options)
        try:
            S.read_marker(uri, storage_options)
        except LakeNotFound:
            _no_bucket(uri, storage_options)
            for name, schema in S.TABLES.items():
                DeltaTable.create(f"{uri}/tables/{name}", schema, mode="ignore", name=name,
                                  description=f"phoneloop {name} (schema v{S.SCHEMA_VERSION})",
                                  storage_options=storage_options)
            S.write_marker(uri, storage_options=storage_options)
        return cls(uri, storage_options=storage_options)

    @classmethod
    def open(cls, uri: str, *, storage_options: dict[str, str] | None = None) -> Lake:
        return cls(uri, storage_options=storage_options)

    def as_of(self, when: Snapshot) -> Lake:
        """A read-only view of the lake at table versions ({table: version}) or a time.

        A bad target (unparseable time, unknown table, a version that is not an integer)
        raises ``SnapshotNotFound`` here; a version the table never had raises it on the
        first read."""
        if isinstance(when, str):
            try:
                when = datetime.fromisoformat(when)
            except ValueError:
                raise SnapshotNotFound(f"as_of time {when!r} is not an ISO 8601 time "
                                       "(e.g. 2026-12-01T10:00:00Z)") from None
        if isinstance(when, datetime) and when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        if isinstance(when, dict):
            for name, version in when.items():
                if name not in S.TABLES:
                    raise SnapshotNotFound(f"as_of names no table {name!r} (tables: {', '.join(S.TABLES)})")
                if isinstance(version, bool) or not isinstance(version, int) or version < 0:
                    raise SnapshotNotFound(f"as_of version of {name!r} must be a non-negative integer, "
                                           f"got {version!r}")
        elif not isinstance(when, datetime):
            raise SnapshotNotFound(f"as_of takes {{table: version}} or a time, got {type(when).__name__}")
        return Lake(self.uri, storage_options=self.storage_options, snapshot=when)

    # -- tables -------------------------------------------------------------------------
    def table_uri(self, name: str) -> str:
        S.schema_of(name)
        return f"{self.uri}/tables/{name}"

    @property
    def read_only(self) -> bool:
        """True for a time-travel view and for a lake of an older schema (until migrated)."""
        return self.snapshot is not None or self.schema_version < S.SCHEMA_VERSION

    def check_writable(self) -> None:
        """Raise unless this lake may be written (current schema, not a snapshot)."""
        if self.schema_version < S.SCHEMA_VERSION:
            raise LakeNeedsMigration(
                f"lake at {self.uri} has schema v{self.schema_version}; this phoneloop writes v{S.SCHEMA_VERSION}. "
                f"It is read-only until you run `phoneloop lake migrate --lake {self.uri}`")
        if self.snapshot is not None:
            raise LakeError("this lake view is pinned to a snapshot (as_of) and is read-only")

    @property
    def tables(self) -> dict[str, DeltaTable | None]:
        if self._tables is None:
            self._tables = {name: self._load(name) for name in S.TABLES}
        return self._tables

    def _load(self, name: str) -> DeltaTable | None:
        if self.schema_version < S.SCHEMA_VERSION and name not in migrate.tables_at(self.schema_version):
            return None  # a table of a later schema, absent from this older lake: reads as empty
        dt = DeltaTable(self.table_uri(name), storage_options=self.storage_options)
        target = self.snapshot.get(name) if isinstance(self.snapshot, dict) else self.snapshot
        if target is not None:
            latest = dt.version()
            try:
                dt.load_as_version(target)
            except Exception as exc:  # deltalake raises DeltaError or ValueError, version- and time-dependent
                what = f"version {target}" if isinstance(target, int) else \
                    f"version at {target.isoformat()} ({str(exc).splitlines()[0]})"
                raise SnapshotNotFound(f"table {name!r} has no {what}; latest is version {latest}") from None
        return dt

    def versions(self) -> dict[str, int]:
        """The Delta version of every table in this view of the lake."""
        return {name: dt.version() for name, dt in self.tables.items() if dt is not None}

    def invalidate(self) -> None:
        """Forget cached snapshots after a write so the next read sees it."""
        if self.snapshot is not None:
            raise LakeError("this lake view is pinned to a snapshot (as_of) and is read-only")
        self._tables = None
        self._con = None
        self._frames = None

    # -- reads --------------------------------------------------------------------------
    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = query.connect(self.tables)
        return self._con

    def readonly_connection(self, limits: dict[str, str] | None = None) -> duckdb.DuckDBPyConnection:
        """A new DuckDB connection with the same views that cannot touch files (for user SQL);
        ``limits``: DuckDB settings such as ``{"memory_limit": "256MB"}``, locked with the rest."""
        return query.connect(self.tables, read_only=True, limits=limits)

    def sql(self, q: str, params: list | None = None) -> pa.Table:
        """Run DuckDB SQL over the lake's views and return an Arrow table."""
        rel = self.con.sql(q, params=params) if params else self.con.sql(q)
        return rel.to_arrow_table() if rel is not None else pa.table({})

    def frame(self, sha: str) -> bytes:
        if self._frames is None:
            self._frames = FrameIndex(self.tables["frames"], self.storage_options)
        return self._frames.get(sha)

    def column_values(self, table: str, column: str) -> set:
        """Every distinct value of one column, read from the latest committed version."""
        dt = DeltaTable(self.table_uri(table), storage_options=self.storage_options)
        return set(dt.to_pyarrow_dataset().to_table(columns=[column]).column(0).to_pylist())

    def episode(self, episode_id: str) -> Episode:
        rows = self.sql("SELECT * FROM episodes WHERE episode_id = ?", [episode_id]).to_pylist()
        if not rows:
            raise EpisodeNotFound(f"no episode {episode_id!r} in the lake at {self.uri}")
        row = rows[0]
        steps = self.sql("SELECT * FROM steps WHERE episode_id = ? ORDER BY step_index", [episode_id]).to_pylist()
        return Episode(
            episode_id=row["episode_id"], instruction=row["instruction"], source=row["source"],
            device=Device.from_dict(json.loads(row["device_json"])),
            steps=tuple(_step(s, self.frame(s["frame_sha"])) for s in steps),
            app=row["app"], category=row["category"], task=row["task"], outcome=row["outcome"],
            verified_by=row["verified_by"], policy=row["policy"], round=row["round"],
            meta=json.loads(row["meta_json"]) if row["meta_json"] else {},
            purpose=row["purpose"] or "train", failure_reason=row["failure_reason"], score=row["score"],
        )

    def info(self) -> dict[str, Any]:
        counts = {name: self.sql(f"SELECT count(*) FROM {name}").column(0)[0].as_py() for name in S.TABLES}
        out = {"uri": self.uri, "schema_version": self.schema_version,
               "rows": counts, "versions": self.versions()}
        if self.schema_version < S.SCHEMA_VERSION:
            out["needs_migration"] = f"schema v{self.schema_version} -> v{S.SCHEMA_VERSION}: run `phoneloop lake migrate`"
        return out

    # -- writes -------------------------------------------------------------------------
    def writer(self, **kwargs) -> EpisodeWriter:
        """A new writer (with its own options); ``write_episodes`` reuses a default one."""
        self.check_writable()
        return EpisodeWriter(self, **kwargs)

    def write_episodes(self, episodes: Iterable[Episode], origin: str = "api") -> WriteReport:
        self.check_writable()
        if self._writer is None:
            self._writer = EpisodeWriter(self)
        return self._writer.write(episodes, origin=origin)

    def quarantine(self, records: list[Rejected]) -> None:
        self.writer().quarantine(records)

    def append(self, table: str, rows: list[dict]) -> None:
        """Append rows to a side table (annotations, datasets, models) in one commit."""
        if table in ("episodes", "steps", "frames"):
            raise LakeError(f"write {table} through write_episodes, which keeps them consistent")
        self.check_writable()
        data = pa.Table.from_pylist(rows, schema=S.schema_of(table))
        write_deltalake(self.table_uri(table), data, mode="append", writer_properties=ROW_PROPS,
                        storage_options=self.storage_options)
        self.invalidate()

    def compact(self, *, vacuum: bool = False, force: bool = False) -> dict[str, dict]:
        """Merge small files per table (frames sorted by sha); optionally vacuum old files.

        Vacuuming with zero retention removes the files older versions need: time
        travel to versions before the compaction stops working. So it is refused
        (``VacuumRefused``, nothing deleted) when a registered dataset version pins a
        table version whose files it would delete; ``force=True`` vacuums anyway and
        the report's ``unrebuildable`` lists the dataset versions that lost files.
        """
        self.check_writable()
        report, tables = {}, {}
        for name in S.TABLES:
            dt = tables[name] = DeltaTable(self.table_uri(name), storage_options=self.storage_options)
            if name == "frames":
                metrics = dt.optimize.z_order(["sha256"], writer_properties=FRAME_PROPS)
            else:
                metrics = dt.optimize.compact(writer_properties=ROW_PROPS)
            report[name] = {"files_added": metrics.get("numFilesAdded", 0),
                            "files_removed": metrics.get("numFilesRemoved", 0), "vacuumed": 0}
        self.invalidate()
        if vacuum:
            blocked = self._vacuum_victims(tables)
            if blocked and not force:
                raise VacuumRefused(
                    "vacuum refused, nothing deleted: it would remove files that "
                    + "; ".join(f"{ref} needs ({', '.join(t)})" for ref, t in sorted(blocked.items()))
                    + " to rebuild; pass force to vacuum anyway (those versions can then no longer be rebuilt)")
            for name, dt in tables.items():
                removed = dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
                report[name]["vacuumed"] = len(removed)
            report["unrebuildable"] = sorted(blocked)
            self.invalidate()
        return report

    def _vacuum_victims(self, tables: dict[str, DeltaTable]) -> dict[str, list[str]]:
        """Registered dataset versions (NAME@vN) -> the pinned tables whose files a vacuum would delete."""
        pins = self.sql("SELECT name, version, table_versions_json FROM datasets").to_pylist()
        def names(paths) -> set[str]:  # data file names are unique (uuids); vacuum gives relative paths
            return {p.replace("\\", "/").rsplit("/", 1)[-1] for p in paths}

        doomed = {name: names(dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=True))
                  for name, dt in tables.items()}
        needs: dict[tuple[str, int], set[str]] = {}
        out: dict[str, list[str]] = {}
        for row in pins:
            for table, version in sorted(json.loads(row["table_versions_json"]).items()):
                if not doomed.get(table):
                    continue
                key = (table, int(version))
                if key not in needs:
                    old = DeltaTable(self.table_uri(table), version=int(version), storage_options=self.storage_options)
                    needs[key] = names(old.file_uris())
                if needs[key] & doomed[table]:
                    out.setdefault(f"{row['name']}@v{row['version']}", []).append(f"{table} v{version}")
        return out


def _normalise(uri: str) -> str:
    uri = str(uri)
    if "://" in uri:
        return uri.rstrip("/")
    return os.path.abspath(os.path.expanduser(uri))


def _step(row: dict, png: bytes) -> Step:
    obs = Observation(screenshot=png, ui_tree=row["ui_tree"], package=row["package"], activity=row["activity"])
    return Step(observation=obs, action=Action.from_json(row["action_json"]),
                thought=row["thought"], raw_output=row["raw_output"],
                meta=json.loads(row["meta_json"]) if row.get("meta_json") else {})
