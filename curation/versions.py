"""Dataset versions: immutable ``name@vN`` rows in the lake's ``datasets`` table, with
the recipe, parents, the Delta versions of the tables they read, a fingerprint,
counts and the paths of their export files (under ``<lake>/datasets/<name>/v<N>-<fp>``)."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from curation.errors import CurationError, DatasetNotFound
from datalake.storage import resolve_folder  # noqa: F401  (where a stored dataset folder is now)

_REF = re.compile(r"^(?P<name>[a-z0-9][a-z0-9_.-]{0,63})(?:@v(?P<version>\d+))?$")


@dataclass(frozen=True)
class DatasetVersion:
    name: str
    version: int
    fingerprint: str
    recipe: str
    parents: list[str]
    table_versions: dict[str, int]
    counts: dict[str, Any]
    exports: dict[str, Any]  # "path": the folder relative to the lake root (absolute in versions before issue 31)
    created_at: datetime | None = None
    root: str = field(default="", compare=False, repr=False)  # the lake the row was read from

    @property
    def ref(self) -> str:
        return f"{self.name}@v{self.version}"

    @property
    def path(self) -> str:
        """The version's folder where the lake is now (see ``resolve_folder``)."""
        return resolve_folder(self.root, self.exports.get("path", ""))

    def to_dict(self) -> dict[str, Any]:
        return {"ref": self.ref, "name": self.name, "version": self.version, "fingerprint": self.fingerprint,
                "parents": self.parents, "table_versions": self.table_versions, "counts": self.counts,
                "exports": {**self.exports, "path": self.path}, "recipe": self.recipe,
                "created_at": self.created_at.isoformat() if self.created_at else None}

    def row(self, created_at: datetime) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "fingerprint": self.fingerprint, "recipe": self.recipe,
                "parents_json": json.dumps(self.parents), "table_versions_json": json.dumps(self.table_versions,
                                                                                            sort_keys=True),
                "counts_json": json.dumps(self.counts, sort_keys=True),
                "exports_json": json.dumps(self.exports, sort_keys=True), "created_at": created_at}


def parse_ref(ref: str) -> tuple[str, int | None]:
    match = _REF.match(ref or "")
    if not match:
        raise CurationError(f"bad dataset reference {ref!r}: expected NAME or NAME@vN")
    version = match.group("version")
    return match.group("name"), int(version) if version else None


def relative_folder(lake_uri: str, folder) -> str:
    """``folder`` (a dataset version's folder inside the lake) relative to the lake root,
    as stored in the ``datasets`` row, so the lake can move (``mv``, a copy to object storage)."""
    root, target = str(lake_uri).rstrip("/"), str(folder)
    if target.startswith(root + "/"):
        return target[len(root) + 1:]
    raise CurationError(f"dataset folder {target} is not inside the lake {root}")


def _from_row(row: dict, root: str = "") -> DatasetVersion:
    return DatasetVersion(
        name=row["name"], version=row["version"], fingerprint=row["fingerprint"], recipe=row["recipe"],
        parents=json.loads(row["parents_json"] or "[]"), table_versions=json.loads(row["table_versions_json"]),
        counts=json.loads(row["counts_json"] or "{}"), exports=json.loads(row["exports_json"] or "{}"),
        created_at=row["created_at"], root=root)


def list_versions(lake, name: str | None = None) -> list[DatasetVersion]:
    q = "SELECT * FROM datasets" + (" WHERE name = ?" if name else "") + " ORDER BY name, version"
    return [_from_row(r, lake.uri) for r in lake.sql(q, [name] if name else None).to_pylist()]


def get_version(lake, ref: str) -> DatasetVersion:
    name, version = parse_ref(ref)
    versions = list_versions(lake, name)
    if version is not None:
        versions = [v for v in versions if v.version == version]
    if not versions:
        raise DatasetNotFound(f"no dataset {ref!r} in the lake (see `phoneloop datasets list`)")
    return versions[-1]


def next_version(lake, name: str) -> int:
    versions = list_versions(lake, name)
    return versions[-1].version + 1 if versions else 1


def datasets_root(lake) -> Path:
    if "://" in lake.uri:
        raise CurationError("dataset exports need a local lake for now; set --lake to a local folder")
    return Path(lake.uri) / "datasets"


def dataset_dir(lake, name: str, version: int, fingerprint: str) -> Path:
    """``<lake>/datasets/<name>/v<N>-<fingerprint[:12]>``.

    The fingerprint is in the folder name because ``datasets.load_dataset(folder)``
    caches by the folder's base name and file layout: two different ``v1`` folders
    would otherwise share (and return) one cache entry."""
    return datasets_root(lake) / name / f"v{version}-{fingerprint[:12]}"


def register(lake, dv: DatasetVersion, created_at: datetime) -> None:
    lake.append("datasets", [dv.row(created_at)])


def unredacted_real_episodes(dv: DatasetVersion, storage_options: dict | None = None) -> int:
    """Real-phone episodes in ``dv`` that no ``redact`` op scanned, or one that left the
    pixels unblurred (from its manifest;
    versions built before the manifest counted them report 0)."""
    from datalake import storage

    data = storage.read_bytes(f"{dv.path.rstrip('/')}/manifest.json", storage_options) if dv.path else None
    if data is None:
        raise CurationError(f"{dv.ref}: no manifest.json in {dv.path or 'its folder'}; rebuild it")
    return int(json.loads(data).get("unredacted_real_episodes", 0))


def _manifest(dv: DatasetVersion, storage_options: dict | None = None) -> dict[str, Any]:
    from datalake import storage

    data = storage.read_bytes(f"{dv.path.rstrip('/')}/manifest.json", storage_options) if dv.path else None
    return json.loads(data) if data else {}


def added(a: DatasetVersion, b: DatasetVersion, storage_options: dict | None = None) -> dict[str, Any]:
    """What ``b`` adds to ``a``, from their manifests: instances (task instances told apart by
    content) new in ``b`` and gone from it, and the change in episodes per source (``corrected``:
    corrected rollouts) and per phone (``real``: real and real-like phones). Versions built before
    manifests recorded sources give None there."""
    ma, mb = _manifest(a, storage_options), _manifest(b, storage_options)
    ia, ib = set(ma.get("instances") or []), set(mb.get("instances") or [])

    def change(key: str) -> dict[str, int] | None:
        if key not in ma or key not in mb:
            return None
        names = sorted(set(ma[key]) | set(mb[key]))
        return {n: mb[key].get(n, 0) - ma[key].get(n, 0) for n in names if mb[key].get(n, 0) != ma[key].get(n, 0)}

    sources, phones = change("sources"), change("phones")
    return {"new_instances": len(ib - ia), "dropped_instances": len(ia - ib), "sources": sources, "phones": phones,
            "corrected": None if sources is None else sources.get("corrected", 0),
            "real": None if phones is None else phones.get("real", 0)}


def diff(a: DatasetVersion, b: DatasetVersion, storage_options: dict | None = None) -> dict[str, Any]:
    """What differs between two versions: fingerprint, tables read, counts, recipe text, and what
    ``b`` adds (:func:`added`)."""
    counts = {}
    for key in sorted(set(a.counts) | set(b.counts)):
        if a.counts.get(key) != b.counts.get(key):
            counts[key] = {"a": a.counts.get(key), "b": b.counts.get(key)}
    tables = {t: {"a": a.table_versions.get(t), "b": b.table_versions.get(t)}
              for t in sorted(set(a.table_versions) | set(b.table_versions))
              if a.table_versions.get(t) != b.table_versions.get(t)}
    recipe = list(difflib.unified_diff(a.recipe.splitlines(), b.recipe.splitlines(), a.ref, b.ref, lineterm=""))
    return {"a": a.ref, "b": b.ref, "same_fingerprint": a.fingerprint == b.fingerprint, "counts": counts,
            "table_versions": tables, "recipe_diff": recipe, "added": added(a, b, storage_options)}
