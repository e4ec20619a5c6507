"""The model registry: one row per trained checkpoint in the lake's ``models`` table.

A row names the checkpoint (``name``), where it is (``path``), what it was trained
from (``base_model``, ``parent``: the registered model it continued, if any), on what
(``dataset`` ``name@vN`` and its fingerprint), how (``config_json``: the stage's full
config) and how it went (``metrics_json``). Names may repeat: the newest row wins, so
re-training ``sft-a`` supersedes the old one without rewriting history.

``resolve_model`` turns what a user types after ``--model`` into a loadable path:
``tiny`` (the offline tiny model), a registered name, a local folder, or a Hub id.

On a lake in object storage (``s3://...``) a model is trained in a folder on this machine
(``checkpoint_dir``), and ``register_model`` uploads it into the lake before the row is
written, so the row names the uploaded copy and any machine with the lake's
credentials can load it: ``resolve_model`` downloads such a model once, verified, into
``$PHONELOOP_CACHE`` (training/model_store.py). A local lake keeps checkpoints where they
were trained (``<lake>/models/<name>``). A path inside the lake is stored relative to the
lake root (``models/<name>/...``) and read back under the lake's present root, so a lake
that was moved (``mv``) or copied to object storage still finds its models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from datalake.storage import is_remote, relative_in_lake, resolve_in_lake
from training.errors import BadTrainingConfig, ModelNotFound
from training.tiny import TINY, tiny_model


@dataclass(frozen=True)
class ModelEntry:
    name: str
    path: str
    base_model: str
    dataset: str | None
    dataset_fingerprint: str | None
    parent: str | None
    config: dict[str, Any]
    metrics: dict[str, Any]
    created_at: datetime | None = None

    def row(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "base_model": self.base_model, "dataset": self.dataset,
                "dataset_fingerprint": self.dataset_fingerprint, "parent": self.parent,
                "config_json": json.dumps(self.config, sort_keys=True, default=str),
                "metrics_json": json.dumps(self.metrics, sort_keys=True, default=str),
                "created_at": self.created_at or datetime.now(timezone.utc)}

    def to_dict(self) -> dict[str, Any]:
        out = self.row()
        out["created_at"] = out["created_at"].isoformat()
        return out


def register_model(lake, entry: ModelEntry) -> ModelEntry:
    """Append ``entry``'s row; on an object-store lake its local folder is uploaded first, and
    the entry returned names the uploaded copy. The row stores a path inside the lake
    relative to the lake root (``models/<name>/...``), so a moved or copied lake still finds
    its models; any other path (a folder outside ``models/``, a Hub id) is stored as given."""
    if is_remote(lake.uri) and not is_remote(entry.path) and Path(entry.path).is_dir():
        from training.model_store import publish

        entry = replace(entry, path=publish(lake, entry.name, entry.path))
    rel = relative_in_lake(lake.uri, entry.path)
    stored = rel if rel and rel.startswith("models/") else None
    lake.append("models", [replace(entry, path=stored).row() if stored else entry.row()])
    return entry


def list_models(lake, name: str | None = None) -> list[ModelEntry]:
    q = "SELECT * FROM models" + (" WHERE name = ?" if name else "") + " ORDER BY created_at"
    return [_entry(r, lake.uri) for r in lake.sql(q, [name] if name else None).to_pylist()]


def get_model(lake, name: str) -> ModelEntry:
    rows = list_models(lake, name)
    if not rows:
        raise ModelNotFound(f"no model {name!r} in the lake's registry (see `phoneloop train models`)")
    return rows[-1]


@dataclass(frozen=True)
class ResolvedModel:
    path: str  # what from_pretrained loads
    base_model: str  # the Hub id or path at the root of the lineage
    parent: str | None  # the registered model this one continues


def resolve_model(lake, ref: str) -> ResolvedModel:
    """``tiny`` | a registered model name | a local folder | a Hub id (``org/name``)."""
    if not ref:
        raise BadTrainingConfig("--model is empty: name a Hub model, a local folder, a registered model or 'tiny'")
    if ref == TINY:
        return ResolvedModel(str(tiny_model(lake.uri)), TINY, None)
    registered = list_models(lake, ref)
    if registered:
        entry = registered[-1]
        return ResolvedModel(local_path(lake, entry), entry.base_model, entry.name)
    if Path(ref).expanduser().is_dir():
        path = str(Path(ref).expanduser().resolve())
        return ResolvedModel(path, path, None)
    if ref.count("/") == 1 and not ref.startswith((".", "/", "~")):
        return ResolvedModel(ref, ref, None)  # a Hub id: loaded (and cached) by transformers
    raise ModelNotFound(f"model {ref!r} is not 'tiny', a registered model, a local folder or a Hub id (org/name)")


def local_path(lake, entry: ModelEntry) -> str:
    """A folder on this machine holding registered model ``entry``: its own path, or for a model
    uploaded to an object-store lake a verified copy downloaded once into ``$PHONELOOP_CACHE``."""
    if not is_remote(entry.path):
        return entry.path
    from training.model_store import local_copy

    return str(local_copy(entry.name, entry.path, lake.storage_options))


def checkpoint_dir(lake, name: str) -> Path:
    """Where model ``name`` is trained: ``<lake>/models/<name>``; for a lake on object storage
    a folder on this machine (``$PHONELOOP_CACHE/models/<lake key>/<name>``), uploaded into
    the lake when the model is registered (``register_model``)."""
    if "://" in lake.uri:
        from training.data import cache_root, lake_key

        return cache_root() / "models" / lake_key(lake.uri) / name
    return Path(lake.uri) / "models" / name


def model_path(lake_uri: str, stored: str) -> str:
    """Where a ``models`` row's path is now: a relative one under the lake's present root;
    an absolute one from before paths were stored relative, as stored, or under the present
    root when the lake moved (``datalake.storage.resolve_in_lake``). A path that names no
    lake folder (a checkpoint elsewhere) is returned as stored."""
    if not stored or (not is_remote(stored) and not stored.startswith("/") and not stored.startswith("models/")):
        return stored
    resolved = resolve_in_lake(lake_uri, stored, "models")
    if resolved != stored and not is_remote(stored) and Path(stored).exists():
        return stored  # an absolute folder that is still there (outside the lake, or the lake did not move)
    return resolved


def _entry(row: dict, lake_uri: str) -> ModelEntry:
    return ModelEntry(name=row["name"], path=model_path(lake_uri, row["path"]), base_model=row["base_model"],
                      dataset=row["dataset"], dataset_fingerprint=row["dataset_fingerprint"], parent=row["parent"],
                      config=json.loads(row["config_json"] or "{}"), metrics=json.loads(row["metrics_json"] or "{}"),
                      created_at=row["created_at"])
