"""Task sets and evaluation suites in the lake (the ``tasksets`` table, schema v3).

A **task set** is a versioned list of verified task instances (``phoneloop tasks
generate``); an evaluation **suite** is a versioned, named list of instance
fingerprints drawn from one (``id``, ``ood-template``, ``ood-app``; ``phoneloop tasks
suites``). Both are rows of one table, told apart by ``kind``; a version is written
in one commit, so a reader never sees half of one. References read ``NAME`` (the
newest version) or ``NAME@vN``.

``training_instances`` answers the question an evaluation must ask before it runs:
which instance fingerprints did a model train on? It reads the model's dataset
version's ``manifest.json`` (its ``instances`` list, written by ``curate``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from datalake import schema as S
from datalake import storage
from datalake.errors import LakeError

KINDS = ("taskset", "suite")
_REF = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*)(?:@v(?P<version>\d+))?$")


class TaskSetNotFound(LakeError):
    """No task set or suite of that name (and version) in the lake."""


def parse_ref(ref: str) -> tuple[str, int | None]:
    match = _REF.match(ref or "")
    if not match:
        raise LakeError(f"bad task set reference {ref!r}: expected NAME or NAME@vN (letters, digits, . _ -)")
    return match.group("name"), int(match.group("version")) if match.group("version") else None


def versions(lake, name: str, kind: str | None = None) -> list[int]:
    q = "SELECT DISTINCT version FROM tasksets WHERE name = ?" + (" AND kind = ?" if kind else "")
    return sorted(r["version"] for r in lake.sql(q, [name, kind] if kind else [name]).to_pylist())


def write(lake, name: str, kind: str, rows: Iterable[dict[str, Any]], *, parent: str | None = None) -> str:
    """Write the next version of ``name`` (one commit); returns its reference ``name@vN``."""
    if kind not in KINDS:
        raise LakeError(f"task set kind must be one of {KINDS}, not {kind!r}")
    parse_ref(name)
    rows = list(rows)
    if not rows:
        raise LakeError(f"{kind} {name!r} would be empty: nothing written")
    version = (versions(lake, name) or [0])[-1] + 1
    created = S.now()
    fields = set(S.TASKSETS.names)
    out = [{**{k: v for k, v in r.items() if k in fields}, "name": name, "version": version, "kind": kind,
            "parent": parent, "created_at": created} for r in rows]
    seen: set[str] = set()
    for r in out:
        if r["fingerprint"] in seen:
            raise LakeError(f"{kind} {name!r}: fingerprint {r['fingerprint']} listed twice")
        seen.add(r["fingerprint"])
    lake.append("tasksets", out)
    return f"{name}@v{version}"


def read(lake, ref: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Every row of task set or suite ``ref`` (newest version when none is named), in (template, seed) order."""
    name, version = parse_ref(ref)
    have = versions(lake, name, kind)
    if not have or (version is not None and version not in have):
        what = kind or "task set or suite"
        known = sorted({r["name"] for r in lake.sql("SELECT DISTINCT name FROM tasksets").to_pylist()})
        raise TaskSetNotFound(f"no {what} {ref!r} in the lake (known: {', '.join(known) or 'none'}; "
                              "see `phoneloop tasks generate` and `phoneloop tasks suites`)")
    version = version if version is not None else have[-1]
    return lake.sql("SELECT * FROM tasksets WHERE name = ? AND version = ? ORDER BY template, seed, locale",
                    [name, version]).to_pylist()


def resolve(lake, ref: str, kind: str | None = None) -> str:
    """``ref`` with its version made explicit (``id`` -> ``id@v3``)."""
    name, version = parse_ref(ref)
    if version is None:
        have = versions(lake, name, kind)
        if not have:
            read(lake, ref, kind)  # raises with the known names
        version = have[-1]
    return f"{name}@v{version}"


def listing(lake) -> list[dict[str, Any]]:
    return lake.sql("""SELECT name, version, kind, any_value(parent) AS parent, count(*) AS instances,
                              count(DISTINCT template) AS templates, min(created_at) AS created_at
                       FROM tasksets GROUP BY name, version, kind ORDER BY name, version""").to_pylist()


def dataset_instances(lake, dataset_ref: str) -> set[str]:
    """Instance fingerprints of the episodes in dataset version ``NAME@vN`` (its manifest's ``instances``)."""
    name, _, version = dataset_ref.partition("@v")
    rows = lake.sql("SELECT exports_json FROM datasets WHERE name = ? AND version = ?",
                    [name, int(version) if version.isdigit() else -1]).to_pylist()
    if not rows:
        raise LakeError(f"no dataset version {dataset_ref!r} in the lake")
    path = json.loads(rows[0]["exports_json"] or "{}").get("path")
    if not path:
        raise LakeError(f"dataset {dataset_ref}: no folder recorded; cannot read what it trained on")
    path = storage.resolve_folder(lake.uri, path)  # stored relative to the lake root (a lake may move)
    data = storage.read_bytes(f"{path.rstrip('/')}/manifest.json", getattr(lake, "storage_options", None))
    if data is None:
        raise LakeError(f"dataset {dataset_ref}: no manifest.json in {path}")
    manifest = json.loads(data)
    if "instances" not in manifest:
        raise LakeError(f"dataset {dataset_ref} was built before instances were recorded; rebuild it "
                        "(phoneloop curate) so evaluations can check for overlap")
    return set(manifest["instances"])


def training_instances(lake, model: str) -> tuple[list[str], set[str]]:
    """(dataset refs, their instance fingerprints) that registered model ``model`` and every model it
    continued (``models.parent``) trained on; ``([], set())`` for a name that is not registered."""
    refs: list[str] = []
    seen: set[str] = set()
    name: str | None = model
    while name and name not in seen:
        seen.add(name)
        rows = lake.sql("SELECT dataset, parent FROM models WHERE name = ? ORDER BY created_at DESC LIMIT 1",
                        [name]).to_pylist()
        if not rows:
            break
        if rows[0]["dataset"] and rows[0]["dataset"] not in refs:
            refs.append(rows[0]["dataset"])
        name = rows[0]["parent"]
    fps: set[str] = set()
    for ref in refs:
        fps |= dataset_instances(lake, ref)
    return refs, fps


SUITES = ("id", "ood-template", "ood-app")


def per_template(rows: list[dict[str, Any]], most: int) -> list[dict[str, Any]]:
    """The first ``most`` rows of each template, in order."""
    count: dict[str, int] = {}
    out = []
    for r in rows:
        count[r["template"]] = count.get(r["template"], 0) + 1
        if count[r["template"]] <= most:
            out.append(r)
    return out


def split_suites(rows: list[dict[str, Any]], train: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The three evaluation suites of task-set ``rows`` against training instances ``train``, by content.

    * ``id``: instances of trained templates whose fingerprint **and** episode (instruction + oracle
      actions) are not in the training set — an unseen instance, not a replay with another seed;
    * ``ood-template``: templates never trained, of apps that were;
    * ``ood-app``: instances none of whose apps was trained.
    """
    fps = {r["fingerprint"] for r in train}
    keys = {r.get("episode_key") for r in train} - {None}
    templates = {r["template"] for r in train}
    apps = {a for r in train for a in (r.get("apps") or r.get("app") or "").split(",") if a}
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in SUITES}
    for r in rows:
        mine = {a for a in (r.get("apps") or r.get("app") or "").split(",") if a}
        if r["fingerprint"] in fps or r.get("episode_key") in keys:
            continue
        if r["template"] in templates:
            out["id"].append(r)
        elif mine and not mine & apps:
            out["ood-app"].append(r)
        elif r["template"] not in templates:
            out["ood-template"].append(r)
    return out
