"""Dataset versions as the viewer shows them: the episodes they contain, and a diff of two.

A version's row (the ``datasets`` table, written by curation/build.py) names its folder in
``exports["path"]`` and, per export format and split, the Parquet files it wrote
(``exports["formats"][fmt][split]["files"]``, relative to the folder). Every export row
carries ``episode_id``, so the episodes of a version are the ids in one format's files.
Files are only read inside the version's folder (a name that climbs out is skipped). A
folder on object storage (``s3://...``: the version of a lake in a bucket) is read through
the lake's ``storage_options``, the credentials its tables use.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from datalake import storage

MAX_FILES = 200


def episodes(row: dict[str, Any], storage_options: dict[str, str] | None = None) -> dict[str, list[str]] | None:
    """``{split: [episode_id, ...]}`` from the version's first export format, or None if unknown.

    ``storage_options``: the lake's, for a version whose folder is on object storage."""
    exports = row.get("exports") if isinstance(row.get("exports"), dict) else {}
    folder, formats = exports.get("path"), exports.get("formats")
    if not isinstance(folder, str) or not isinstance(formats, dict) or not formats:
        return None
    read = _remote_reader(folder, storage_options) if storage.is_remote(folder) else _local_reader(folder)
    if read is None:
        return None
    fmt = sorted(formats)[0]
    out: dict[str, list[str]] = {}
    splits = formats[fmt] if isinstance(formats[fmt], dict) else {}
    for split, info in sorted(splits.items()):
        files = info.get("files", []) if isinstance(info, dict) else []
        ids: dict[str, None] = {}
        for rel in files[:MAX_FILES]:
            try:
                column = read(str(rel))
            except (OSError, KeyError, ValueError):
                continue
            if column is not None:
                ids.update(dict.fromkeys(column))
        out[split] = list(ids)
    return out


def _local_reader(folder: str):
    root = Path(folder).resolve()

    def read(rel: str) -> list | None:
        path = (root / rel).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            return None
        return pq.read_table(path, columns=["episode_id"]).column(0).to_pylist()

    return read


def _remote_reader(folder: str, storage_options: dict[str, str] | None):
    try:
        fs, root = storage.filesystem(folder, storage_options)
    except (OSError, ValueError):
        return None

    def read(rel: str) -> list | None:
        if not storage.inside(rel):
            return None  # only names inside the version's folder
        return pq.read_table(f"{root}/{rel}", columns=["episode_id"], filesystem=fs).column(0).to_pylist()

    return read


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def diff(a: dict[str, Any], b: dict[str, Any], storage_options: dict[str, str] | None = None) -> dict[str, Any]:
    """What changed from version ``a`` to ``b``: counts, table versions, recipe lines, episodes."""
    ca, cb = _flat(a.get("counts") or {}), _flat(b.get("counts") or {})
    counts = [{"key": k, "a": ca.get(k), "b": cb.get(k)} for k in sorted(set(ca) | set(cb))
              if not isinstance(ca.get(k, cb.get(k)), list)]
    ta, tb = a.get("table_versions") or {}, b.get("table_versions") or {}
    tables = [{"table": t, "a": ta.get(t), "b": tb.get(t)} for t in sorted(set(ta) | set(tb))]
    recipe = list(difflib.unified_diff(a["recipe"].splitlines(), b["recipe"].splitlines(),
                                       f"v{a['version']}", f"v{b['version']}", lineterm=""))
    ea, eb = episodes(a, storage_options), episodes(b, storage_options)
    added = removed = None
    if ea is not None and eb is not None:
        sa = {i for ids in ea.values() for i in ids}
        sb = {i for ids in eb.values() for i in ids}
        added, removed = sorted(sb - sa), sorted(sa - sb)
    return {"name": a["name"], "a": a["version"], "b": b["version"],
            "fingerprints": {"a": a["fingerprint"], "b": b["fingerprint"]}, "counts": counts,
            "table_versions": tables, "recipe_diff": recipe, "episodes_added": added, "episodes_removed": removed}
