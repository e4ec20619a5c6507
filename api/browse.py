"""What the service reads from the lake: episode lists and pages, frames, datasets, models.

``Browser`` wraps one ``Lake`` for a multi-threaded server:
- one lock around the lake's shared DuckDB connection (it is not safe across threads);
- every ``refresh_s`` seconds a read compares the Delta versions of the tables with the
  ones it has loaded and reloads them if another process committed since;
- frames come from a second ``Lake`` so that refreshing queries never throws the frame
  index away, and from a byte-bounded LRU cache (frames are content-addressed: a sha
  always names the same bytes). A frame missing from the index reloads it once.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow.fs as pafs
from deltalake import DeltaTable

from api.errors import DatasetNotFound, InvalidFrameSha, ReportNotFound
from datalake import schema as S
from datalake.errors import EpisodeNotFound, FrameNotFound
from datalake.lake import Lake

SHA_RE = re.compile(r"^[0-9a-f]{64}$")
EPISODE_FILTERS = ("source", "app", "category", "outcome", "round", "policy")
LIST_COLUMNS = ("episode_id", "instruction", "source", "app", "category", "task", "phone", "outcome",
                "verified_by", "policy", "round", "num_steps", "created_at")


class FrameCache:
    """A thread-safe LRU of PNG bytes, bounded by total size."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, sha: str) -> bytes | None:
        with self._lock:
            data = self._items.get(sha)
            if data is not None:
                self._items.move_to_end(sha)
            return data

    def put(self, sha: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            if sha in self._items:
                return
            self._items[sha] = data
            self._size += len(data)
            while self._size > self.max_bytes:
                _, old = self._items.popitem(last=False)
                self._size -= len(old)


def _one_snapshot(method):
    """Run a multi-query read under the lock, so every query sees the same table versions."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)
    return locked


class Browser:
    def __init__(self, lake: Lake, *, refresh_s: float = 2.0, frame_cache_bytes: int = 256 << 20):
        self.lake = lake
        self.refresh_s = refresh_s
        self.lock = threading.RLock()
        self._frames_lake = Lake.open(lake.uri, storage_options=lake.storage_options)
        self._frames_lock = threading.Lock()
        self._cache = FrameCache(frame_cache_bytes)
        self._checked = time.monotonic()
        self._versions: dict[str, int] | None = None

    # -- freshness ----------------------------------------------------------------------
    def _latest_versions(self) -> dict[str, int]:
        return {name: DeltaTable(self.lake.table_uri(name), storage_options=self.lake.storage_options).version()
                for name in S.TABLES}

    def refresh(self, force: bool = False) -> None:
        """Reload the tables if another writer committed since they were loaded (under ``lock``)."""
        now = time.monotonic()
        if not force and now - self._checked < self.refresh_s:
            return
        self._checked = now
        latest = self._latest_versions()
        if self._versions is None:
            self._versions = self.lake.versions()
        if latest != self._versions:
            self.lake.invalidate()
            self._versions = self.lake.versions()

    @contextmanager
    def fresh_lake(self) -> Iterator[Lake]:
        """The lake, refreshed and held under ``lock`` (for writes and read-only connections)."""
        with self.lock:
            self.refresh()
            yield self.lake

    def sql(self, query: str, params: list | None = None) -> list[dict[str, Any]]:
        with self.lock:
            self.refresh()
            return self.lake.sql(query, params).to_pylist()

    # -- episodes -----------------------------------------------------------------------
    @_one_snapshot
    def list_episodes(self, filters: dict[str, Any], *, limit: int, offset: int) -> dict[str, Any]:
        """Episodes matching the filters (exact matches), newest batch first; with the total."""
        where, params = [], []
        for name in EPISODE_FILTERS:
            if filters.get(name) is not None:
                where.append(f'e."{name}" = ?')
                params.append(filters[name])
        cond = f"WHERE {' AND '.join(where)}" if where else ""
        total = self.sql(f"SELECT count(*) AS n FROM episodes e {cond}", params)[0]["n"]
        cols = ", ".join(f"e.{c}" for c in LIST_COLUMNS)
        rows = self.sql(f"""
            SELECT {cols}, h.outcome AS human_outcome FROM episodes e
            LEFT JOIN ({_LATEST_EPISODE_JUDGEMENT}) h USING (episode_id)
            {cond} ORDER BY e.created_at DESC, e.batch_seq, e.episode_id LIMIT ? OFFSET ?""",
                        [*params, limit, offset])
        return {"total": total, "limit": limit, "offset": offset, "items": rows}

    @_one_snapshot
    def filter_values(self) -> dict[str, list]:
        """The distinct values of each filter column (for the viewer's drop-downs)."""
        out = {}
        for name in EPISODE_FILTERS:
            rows = self.sql(f'SELECT DISTINCT "{name}" AS v FROM episodes WHERE "{name}" IS NOT NULL ORDER BY 1')
            out[name] = [r["v"] for r in rows]
        return out

    @_one_snapshot
    def episode(self, episode_id: str) -> dict[str, Any]:
        """One episode with its steps (recorded action, latest accepted correction) and annotations."""
        rows = self.sql("SELECT * EXCLUDE (batch_id, batch_seq) FROM episodes WHERE episode_id = ?", [episode_id])
        if not rows:
            raise EpisodeNotFound(f"no episode {episode_id!r} in the lake at {self.lake.uri}")
        episode = rows[0]
        episode["device"] = json.loads(episode.pop("device_json"))
        episode["meta"] = json.loads(episode.pop("meta_json") or "{}")
        steps = self.sql("""
            SELECT step_index, frame_sha, frame_width, frame_height, package, activity, thought,
                   recorded_action_json, action_json, corrected, step_correct, annotation_id
            FROM steps_resolved WHERE episode_id = ? ORDER BY step_index""", [episode_id])
        episode["steps"] = [_step(s) for s in steps]
        annotations = self.sql("SELECT * FROM annotations WHERE episode_id = ? ORDER BY created_at, annotation_id",
                               [episode_id])
        for a in annotations:
            a["action"] = json.loads(a.pop("action_json")) if a["action_json"] else None
        episode["annotations"] = annotations
        judged = [a for a in annotations if a["target"] == "episode" and a["status"] == "accepted" and a["outcome"]]
        episode["human_outcome"] = judged[-1]["outcome"] if judged else None
        episode["judged_by"] = judged[-1]["annotator"] if judged else None
        return episode

    # -- frames -------------------------------------------------------------------------
    def cached_frame(self, sha: str) -> bytes | None:
        """A frame already in memory, or None (never blocks: safe on the event loop)."""
        return self._cache.get(sha)

    def frame(self, sha: str) -> bytes:
        """PNG bytes by sha256 (64 lowercase hex); raises InvalidFrameSha or FrameNotFound."""
        if not SHA_RE.match(sha):
            raise InvalidFrameSha(f"frame key must be 64 lowercase hex characters, got {sha[:80]!r}")
        data = self._cache.get(sha)
        if data is not None:
            return data
        with self._frames_lock:
            try:
                data = self._frames_lake.frame(sha)
            except FrameNotFound:
                if not self._frames_changed():
                    raise
                self._frames_lake.invalidate()  # a writer added frames since the index was built
                data = self._frames_lake.frame(sha)
        self._cache.put(sha, data)
        return data

    def _frames_changed(self) -> bool:
        """Whether the frames table has a newer version than the index (so a miss is worth a reload)."""
        loaded = self._frames_lake.tables["frames"].version()
        latest = DeltaTable(self.lake.table_uri("frames"), storage_options=self.lake.storage_options).version()
        return latest != loaded

    # -- datasets and models ------------------------------------------------------------
    def datasets(self) -> list[dict[str, Any]]:
        return [_decode(r) for r in self.sql("SELECT * FROM datasets ORDER BY name, version")]

    def dataset(self, name: str, version: int) -> dict[str, Any]:
        rows = self.sql("SELECT * FROM datasets WHERE name = ? AND version = ? ORDER BY created_at DESC LIMIT 1",
                        [name, version])
        if not rows:
            raise DatasetNotFound(f"no dataset {name!r} version {version} in the lake at {self.lake.uri}")
        return _decode(rows[0])

    def dataset_report(self, name: str, version: int) -> tuple[str, bytes]:
        """The report a dataset version names in ``exports_json["report"]``: (path, bytes).

        A relative path is read from the version's folder (``exports_json["path"]``), or from
        the lake's root when the version names no folder.
        """
        exports = self.dataset(name, version)["exports"] or {}
        path = exports.get("report") if isinstance(exports, dict) else None
        if not isinstance(path, str) or not path:
            raise ReportNotFound(f"dataset {name!r} v{version} names no report")
        base = exports.get("path") or self.lake.uri  # curation writes it inside the version's folder
        uri = path if ("://" in path or path.startswith("/")) else f"{str(base).rstrip('/')}/{path}"
        try:
            fs, inner = pafs.FileSystem.from_uri(uri)
            with fs.open_input_stream(inner) as src:
                return path, src.read()
        except (OSError, ValueError) as exc:
            raise ReportNotFound(f"report of dataset {name!r} v{version} at {path} cannot be read: {exc}") from None

    def models(self) -> list[dict[str, Any]]:
        return [_decode(r) for r in self.sql("SELECT * FROM models ORDER BY created_at, name")]


_LATEST_EPISODE_JUDGEMENT = """
    SELECT episode_id, outcome FROM annotations
    WHERE target = 'episode' AND status = 'accepted' AND outcome IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY episode_id ORDER BY created_at DESC, annotation_id DESC) = 1
"""


def _step(row: dict[str, Any]) -> dict[str, Any]:
    recorded = json.loads(row.pop("recorded_action_json"))
    resolved = json.loads(row.pop("action_json"))
    row["action"] = recorded
    row["correction"] = resolved if row["corrected"] else None
    row["frame_url"] = f"/frames/{row['frame_sha']}.png"
    return row


def _decode(row: dict[str, Any]) -> dict[str, Any]:
    """A datasets/models row with its *_json columns parsed (``counts_json`` -> ``counts``)."""
    out = {}
    for key, value in row.items():
        if key.endswith("_json"):
            try:
                out[key[:-5]] = json.loads(value) if value else None
            except ValueError:
                out[key[:-5]] = value
        else:
            out[key] = value
    return out
