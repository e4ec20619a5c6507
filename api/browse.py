"""What the service reads from the lake: episode lists and pages, frames, datasets, models.

``Browser`` wraps one ``Lake`` for a multi-threaded server:
- one lock around the lake's shared DuckDB connection (it is not safe across threads);
- every ``refresh_s`` seconds a read compares the Delta versions of the tables with the
  ones it has loaded and reloads them if another process committed since;
- frames come from a second ``Lake`` so that refreshing queries never throws the frame
  index away, and from a byte-bounded LRU cache (frames are content-addressed: a sha
  always names the same bytes). A frame missing from the index reloads it once;
- word search goes through a ``SearchIndex`` (api/search.py) kept up to date per snapshot:
  new episodes are indexed once, annotation notes again whenever the snapshot changes.
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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

import pyarrow as pa

from api import datasets, hits, listing
from api.search import SearchIndex
from api.errors import DatasetNotFound, InvalidFrameSha, ReportNotFound, StepNotFound
from datalake import schema as S
from datalake import storage
from datalake.errors import EpisodeNotFound, FrameNotFound, UITreeError
from datalake.lake import Lake
from datalake.uitree import parse_ui_tree

SHA_RE = re.compile(r"^[0-9a-f]{64}$")
# rollout.policies.INVALID: an output that did not parse is a ``wait`` whose raw_output starts so
INVALID = "invalid: "


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
        self._listing_con = None  # the connection the ``listing`` temp table was built on
        self._search = SearchIndex()
        self._search_con = None  # the connection (snapshot) the search index was last brought up to
        self._rows: tuple | None = None  # (connection, hits.ListingRows) of the listing the hits map to

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
    def _listing(self) -> None:
        """(Re)build the ``listing`` temp table when the lake's connection is new (a new snapshot)."""
        self.refresh()
        con = self.lake.con
        if self._listing_con is not con:
            con.execute(f"CREATE OR REPLACE TEMP TABLE listing AS {listing.LISTING_SQL}")
            self._listing_con = con

    def _search_hits(self, filters: listing.EpisodeFilters) -> pa.Table | None:
        """Register ``search_hits(row, score)`` for ``filters.q`` on the lake's connection (api/hits.py)."""
        if not listing.searching(filters):
            return None
        self._update_search()
        if self._rows is None or self._rows[0] is not self.lake.con or self._rows[1].indexed != len(self._search):
            self._rows = (self.lake.con, hits.ListingRows.build(self.lake.con, self._search.ids))
        found = self._rows[1].hits(*self._search.search_docs(filters.q))
        self.lake.con.register("search_hits", found)
        return found

    def _update_search(self) -> None:
        """Index the episodes this snapshot added, and its annotation notes (under ``lock``)."""
        con = self.lake.con
        if self._search_con is con:
            return
        con.register("search_known", pa.table({"episode_id": pa.array(self._search.ids, pa.string())}))
        self._search.add((r["episode_id"], r["doc"]) for r in self.sql(SEARCH_DOCS))
        self._search.set_notes({r["episode_id"]: r["notes"] for r in self.sql(SEARCH_NOTES)})
        con.unregister("search_known")
        self._search_con = con

    @_one_snapshot
    def search(self, q: str, limit: int = 50) -> list[tuple[str, float]]:
        """The best ``limit`` episodes for ``q`` with their BM25 scores (api/search.py)."""
        self.refresh()
        self._update_search()
        ids, scores = self._search.search(q)
        return list(zip(ids[:limit], map(float, scores[:limit])))

    @_one_snapshot
    def list_episodes(self, filters: listing.EpisodeQuery, *, facets: bool = True) -> dict[str, Any]:
        """Episodes matching the filters (api/listing.py), with the total and facet counts."""
        self._listing()
        found = self._search_hits(filters)
        count, page, params = listing.list_sql(filters)
        rows = self.sql(page, [*params, filters.limit, filters.offset])
        if found is not None:  # with q: the count and facets of the matching rows in numpy (api/hits.py)
            matching = hits.matching_rows(self.lake.con, found, filters)
            out = {"total": len(matching), "limit": filters.limit, "offset": filters.offset, "items": rows}
            if facets:
                out["facets"] = self._rows[1].facets(matching)
            return out
        total = self.sql(count, params)[0]["n"]
        out = {"total": total, "limit": filters.limit, "offset": filters.offset, "items": rows}
        if facets:
            sql, params = listing.facets_sql(filters)
            out["facets"] = listing.facets_from_rows(self.sql(sql, params))
        return out

    @_one_snapshot
    def episode_rows(self, filters: listing.EpisodeFilters, max_rows: int) -> tuple[list[dict[str, Any]], bool]:
        """Every episode the filters select (the list's columns), at most ``max_rows``; and whether more exist."""
        self._listing()
        self._search_hits(filters)
        _, page, params = listing.list_sql(filters)
        rows = self.sql(page, [*params, max_rows + 1, 0])
        return rows[:max_rows], len(rows) > max_rows

    @_one_snapshot
    def neighbours(self, filters: listing.EpisodeFilters, episode_id: str) -> dict[str, Any]:
        """The previous and next episode around ``episode_id`` in the listing ``filters`` give."""
        self._listing()
        self._search_hits(filters)
        sql, params = listing.neighbours_sql(filters)
        rows = self.sql(sql, [*params, episode_id])
        return rows[0] if rows else {"prev": None, "next": None, "pos": None, "total": None}

    @_one_snapshot
    def episode(self, episode_id: str) -> dict[str, Any]:
        """One episode (outcome after human judgement) with its steps, what the model said, annotations."""
        self._listing()
        rows = self.sql("""SELECT l.* EXCLUDE (batch_id, batch_seq, template, eval_id, rollout_id),
                                  e.device_json, e.meta_json
                           FROM listing l JOIN episodes e USING (episode_id) WHERE l.episode_id = ?""", [episode_id])
        if not rows:
            raise EpisodeNotFound(f"no episode {episode_id!r} in the lake")
        episode = rows[0]
        episode["device"] = json.loads(episode.pop("device_json"))
        episode["meta"] = json.loads(episode.pop("meta_json") or "{}")
        for key in ("rollout_id", "eval_id", "seed"):
            episode[key] = episode["meta"].get(key)
        annotations = self.sql("SELECT * FROM annotations WHERE episode_id = ? ORDER BY created_at, annotation_id",
                               [episode_id])
        # without step annotations steps_resolved is the steps as recorded: skip its judgement work
        judged = any(a["target"] == "step" for a in annotations)
        steps = self.sql(f"""
            SELECT step_index, frame_sha, frame_width, frame_height, package, activity, thought, raw_output,
                   meta_json, pairing, ui_tree IS NOT NULL AS has_tree, {_RESOLVED if judged else _AS_RECORDED}
            FROM {"steps_resolved" if judged else "steps"} WHERE episode_id = ? ORDER BY step_index""", [episode_id])
        episode["steps"] = [_step(s) for s in steps]
        for a in annotations:
            a["action"] = json.loads(a.pop("action_json")) if a["action_json"] else None
        episode["annotations"] = annotations
        judgement = [a for a in annotations if a["annotation_id"] == episode["judgement_id"]]
        episode["judged_by"] = judgement[0]["annotator"] if judgement else None
        return episode

    @_one_snapshot
    def step_tree(self, episode_id: str, step_index: int) -> dict[str, Any]:
        """A step's UI tree as a flat element list (depth, parent), with the action's target index."""
        rows = self.sql("SELECT ui_tree, action_json FROM steps WHERE episode_id = ? AND step_index = ?",
                        [episode_id, step_index])
        if not rows:
            raise StepNotFound(f"episode {episode_id!r} has no step {step_index}")
        xml = rows[0]["ui_tree"]
        element = json.loads(rows[0]["action_json"]).get("element") or {}
        if xml is None:
            return {"episode_id": episode_id, "step_index": step_index, "nodes": [], "target": None}
        try:
            nodes = [asdict(n) for n in parse_ui_tree(xml)]
        except UITreeError as exc:
            raise StepNotFound(f"step {step_index} of episode {episode_id!r} has an unreadable UI tree: {exc}") from None
        return {"episode_id": episode_id, "step_index": step_index, "nodes": nodes, "target": _target(nodes, element)}

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
        return [self._rooted(_decode(r)) for r in self.sql("SELECT * FROM datasets ORDER BY name, version")]

    def _rooted(self, row: dict[str, Any]) -> dict[str, Any]:
        """A datasets row with its folder resolved under this lake's root (folders are stored relative
        to it since issue 31, so a moved lake's versions still open; older absolute ones re-rooted)."""
        exports = row.get("exports")
        if isinstance(exports, dict) and isinstance(exports.get("path"), str):
            row["exports"] = {**exports, "path": storage.resolve_folder(self.lake.uri, exports["path"])}
        return row

    def dataset(self, name: str, version: int) -> dict[str, Any]:
        rows = self.sql("SELECT * FROM datasets WHERE name = ? AND version = ? ORDER BY created_at DESC LIMIT 1",
                        [name, version])
        if not rows:
            raise DatasetNotFound(f"no dataset {name!r} version {version} in the lake")
        return self._rooted(_decode(rows[0]))

    def dataset_report(self, name: str, version: int) -> tuple[str, bytes]:
        return self.dataset_file(name, version, "report")

    def dataset_file(self, name: str, version: int, kind: str) -> tuple[str, bytes]:
        """The file a dataset version names in ``exports_json[kind]`` (report, card): (path, bytes).

        A relative path is read from the version's folder (``exports_json["path"]``), or from
        the lake's root when the version names no folder.
        """
        exports = self.dataset(name, version)["exports"] or {}
        path = exports.get(kind) if isinstance(exports, dict) else None
        if not isinstance(path, str) or not path:
            raise ReportNotFound(f"dataset {name!r} v{version} names no {kind}")
        base = exports.get("path") or self.lake.uri  # curation writes it inside the version's folder
        uri = path if ("://" in path or path.startswith("/")) else f"{str(base).rstrip('/')}/{path}"
        try:
            fs, inner = storage.filesystem(uri, self.lake.storage_options)  # s3:// folders: the lake's credentials
            with fs.open_input_stream(inner) as src:
                return path, src.read()
        except (OSError, ValueError) as exc:
            raise ReportNotFound(f"{kind} of dataset {name!r} v{version} ({Path(path).name}) cannot be read: "
                                 f"{type(exc).__name__}") from None

    def dataset_card(self, name: str, version: int) -> bytes:
        """The version's dataset card (``exports_json["card"]``, README.md), like its report."""
        return self.dataset_file(name, version, "card")[1]

    def dataset_diff(self, name: str, a: int, b: int) -> dict[str, Any]:
        return datasets.diff(self.dataset(name, a), self.dataset(name, b), self.lake.storage_options)

    def dataset_episodes(self, row: dict[str, Any]) -> dict[str, list[str]] | None:
        """A version's episode ids by split, read from its export files (in the bucket for an s3:// lake)."""
        return datasets.episodes(row, self.lake.storage_options)

    def models(self) -> list[dict[str, Any]]:
        return [_decode(r) for r in self.sql("SELECT * FROM models ORDER BY created_at, name")]


# One search document per episode not indexed yet: instruction, task, app, what the model said
# (raw output and thought of every step) and the UI text of its screens (text / content-desc).
SEARCH_DOCS = r"""
    WITH new AS (SELECT episode_id, instruction, task, app FROM episodes
                 WHERE episode_id NOT IN (SELECT episode_id FROM search_known)),
    said AS (SELECT s.episode_id, string_agg(concat_ws(' ', s.raw_output, s.thought), ' ') AS said,
                    list_distinct(flatten(list(regexp_extract_all(coalesce(s.ui_tree, ''),
                        '(?:text|content-desc)="([^"]+)"', 1)))) AS ui
             FROM steps s SEMI JOIN new USING (episode_id) GROUP BY s.episode_id)
    SELECT n.episode_id, concat_ws(' ', n.instruction, n.task, n.app, d.said, array_to_string(d.ui, ' ')) AS doc
    FROM new n LEFT JOIN said d USING (episode_id)"""
SEARCH_NOTES = """SELECT episode_id, string_agg(note, ' ' ORDER BY created_at) AS notes FROM annotations
                  WHERE note IS NOT NULL AND note <> '' GROUP BY episode_id"""

_RESOLVED = "recorded_action_json, action_json, corrected, step_correct, annotation_id"
_AS_RECORDED = ("action_json AS recorded_action_json, action_json, false AS corrected, "
                "NULL::BOOLEAN AS step_correct, NULL::VARCHAR AS annotation_id")


def _step(row: dict[str, Any]) -> dict[str, Any]:
    recorded = json.loads(row.pop("recorded_action_json"))
    resolved = json.loads(row.pop("action_json"))
    row["action"] = recorded
    row["correction"] = resolved if row["corrected"] else None
    row["frame_url"] = f"/frames/{row['frame_sha']}.png"
    row["meta"] = json.loads(row.pop("meta_json") or "{}")
    row["output"] = model_output(row["raw_output"], row["thought"])
    row["invalid"] = bool(row["output"] and not row["output"]["valid"])
    return row


def model_output(raw: str | None, thought: str | None) -> dict[str, Any] | None:
    """What the model said: ``{valid, error, text}`` (an invalid step's error is the marker's first line)."""
    for text in (raw, thought):
        if text and text.startswith(INVALID):
            error, _, rest = text[len(INVALID):].partition("\n")
            return {"valid": False, "error": error, "text": rest if text is raw else (raw or rest)}
    return {"valid": True, "error": None, "text": raw} if raw else None


def _target(nodes: list[dict[str, Any]], element: dict[str, Any]) -> int | None:
    """The index of the tree node the action names (by index, else by bounds), or None."""
    index, bounds = element.get("index"), element.get("bounds")
    if isinstance(index, int) and 0 <= index < len(nodes):
        if bounds is None or list(nodes[index]["bounds"]) == list(bounds):
            return index
    for node in nodes:
        if bounds is not None and list(node["bounds"]) == list(bounds):
            return node["index"]
    return None


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
