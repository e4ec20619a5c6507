"""Build a dataset version from a recipe: select -> ops -> split -> exports -> register.

1. Pin the lake: every read goes through ``lake.as_of(versions)``, and the versions
   are stored with the dataset, so a rebuild reads exactly the same rows.
2. Select: run the recipe's SQL (it must return ``episode_id``); load those episodes
   with their steps from ``steps_resolved`` (human corrections applied).
3. Ops: apply each op in order, logging episodes/steps in and out and per-app/source counts.
4. Split: seeded and leak-free (whole tasks or apps go to one split).
5. Export: write each format's shards into a hidden temporary folder, then the
   dataset card, the report, ``redactions.jsonl`` and ``manifest.json``.
6. Fingerprint: sha256 over the recipe, the table versions and every data file.
7. Publish: rename the folder to ``v<N>-<fp>`` and append one row to ``datasets``. Any
   failure before this point removes the folder: no half-made version is registered.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path
from typing import Callable

import duckdb

from curation import workset
from curation.card import render_card
from curation.errors import CurationError, EmptySelection, RecipeError
from curation.exports import MAX_SHARD_BYTES, json_dumps, write_export
from curation.ops import OPS
from curation.ops.balance import assign_splits
from curation.ops.base import Context
from curation.recipe import Recipe
from curation.report import render_report
from curation.versions import DatasetVersion, dataset_dir, datasets_root, list_versions, next_version, register
from datalake.schema import now

Progress = Callable[[str, int, int], None]  # (what, done, total)
READ_TABLES = ("episodes", "steps", "frames", "annotations")  # what a build reads, and pins


def curate(lake, recipe: Recipe, *, as_of: dict[str, int] | None = None, progress: Progress | None = None,
           max_shard_bytes: int = MAX_SHARD_BYTES) -> DatasetVersion:
    latest = lake.versions()
    missing = [t for t in READ_TABLES if as_of is not None and t not in as_of]
    if missing:
        raise CurationError(f"as_of must give a version for {', '.join(missing)}")
    pinned = {t: (as_of or latest)[t] for t in READ_TABLES}
    snapshot = lake.as_of(pinned)
    table_versions = {t: snapshot.versions()[t] for t in READ_TABLES}
    ids = select(snapshot, recipe)
    ws = workset.load(snapshot, ids)
    ctx = Context(snapshot, progress=progress)
    ops_log = [{"op": "select", "line": None, "in": workset.counts(ws), "out": workset.counts(ws)}]
    details: dict[str, dict] = {}
    for step in recipe.ops:
        before = workset.counts(ws)
        ctx.details = {}
        try:
            ws = OPS[step.name].fn(ws, ctx, **step.params)
        except ValueError as exc:
            raise RecipeError(f"op {step.name!r}: {exc}", line=step.line, source=recipe.source) from None
        details[step.name] = ctx.details
        ops_log.append({"op": step.name, "line": step.line, "in": before, "out": workset.counts(ws)})
        if progress:
            progress(f"op {step.name}", len(ops_log) - 1, len(recipe.ops))
        if not ws:
            raise EmptySelection(f"{recipe.source}, line {step.line}: op {step.name!r} left no episodes")
    splits = assign_splits(ws, **recipe.split)
    return publish(lake, recipe, ws, ctx, table_versions, ops_log, details, splits, progress, max_shard_bytes)


def select(snapshot, recipe: Recipe) -> list[str]:
    """Episode ids the recipe's SQL returns, each once, in ingest order (so "keep the
    first" in dedup means the earliest ingested)."""
    sql = recipe.select.strip().rstrip(";")
    try:
        rows = snapshot.sql(f"SELECT e.episode_id FROM episodes e SEMI JOIN ({sql}) AS selection USING (episode_id) "
                            "ORDER BY e.created_at, e.batch_id, e.batch_seq")
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0]
        if "episode_id" in message:
            message = "the select query must return an episode_id column"
        raise RecipeError(f"select: {message}", line=_line_of(recipe.text, "select"), source=recipe.source) from None
    ids = [i for i in rows.column(0).to_pylist() if i is not None]
    if not ids:
        raise EmptySelection(f"{recipe.source}: the select query matched no episodes")
    return ids


def publish(lake, recipe, ws, ctx, table_versions, ops_log, details, splits, progress, max_shard_bytes):
    version = next_version(lake, recipe.name)
    tmp = datasets_root(lake) / recipe.name / f".tmp-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    try:
        exports = _write_exports(recipe, ws, ctx, tmp, progress, max_shard_bytes)
        fingerprint = _fingerprint(recipe, table_versions, tmp, exports)
        final = dataset_dir(lake, recipe.name, version, fingerprint)
        counts = {"episodes": len(ws), "steps": sum(len(e.steps) for e in ws),
                  "splits": {s: {"episodes": sum(e.split == s for e in ws),
                                 "steps": sum(len(e.steps) for e in ws if e.split == s)} for s in splits},
                  "ops": [{"op": e["op"], "episodes_out": e["out"]["episodes"], "steps_out": e["out"]["steps"]}
                          for e in ops_log]}
        ref = f"{recipe.name}@v{version}"
        parents = [v.ref for v in list_versions(lake, recipe.name)][-1:]
        (tmp / "README.md").write_text(render_card(ref, recipe, fingerprint, table_versions, counts, exports,
                                                   parents, ops_log), encoding="utf-8")
        (tmp / "report.html").write_text(render_report(ref, ws, ops_log, details, ctx.frame), encoding="utf-8")
        records = details.get("redact", {}).pop("redaction_records", [])
        (tmp / "redactions.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        (tmp / "recipe.yaml").write_text(recipe.text, encoding="utf-8")
        (tmp / "manifest.json").write_text(json_dumps({"ref": ref, "fingerprint": fingerprint, "counts": counts,
                                                       "table_versions": table_versions, "ops": ops_log,
                                                       "details": details}))
        if final.exists():
            raise CurationError(f"{final} already exists: another build registered {ref} meanwhile; run again")
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    dv = DatasetVersion(name=recipe.name, version=version, fingerprint=fingerprint, recipe=recipe.text,
                        parents=parents, table_versions=table_versions, counts=counts,
                        exports={"path": str(final), "formats": exports, "report": "report.html",
                                 "card": "README.md"})
    try:
        register(lake, dv, now())
    except BaseException:
        shutil.rmtree(final, ignore_errors=True)
        raise
    return dv


def _write_exports(recipe, ws, ctx, out: Path, progress, max_shard_bytes) -> dict:
    def frame(step) -> bytes:
        return step.image if step.image is not None else ctx.frame(step.frame_sha)

    exports = {}
    total_steps = sum(len(e.steps) for e in ws)
    for spec in recipe.exports:
        done = 0
        total = len(ws) if spec.name == "episodes" else total_steps

        def tick(n: int, what=f"export {spec.name}", total=total) -> None:
            nonlocal done
            done += n
            if progress:
                progress(what, done, total)

        exports[spec.name] = write_export(spec.name, ws, spec.params, frame, out, max_shard_bytes=max_shard_bytes,
                                          progress=tick)
    return exports


def _fingerprint(recipe: Recipe, table_versions: dict, folder: Path, exports: dict) -> str:
    h = hashlib.sha256()
    h.update(recipe.digest().encode())
    h.update(json.dumps(table_versions, sort_keys=True).encode())
    for fmt in sorted(exports):
        for split in sorted(exports[fmt]):
            for rel in exports[fmt][split]["files"]:
                h.update(rel.encode())
                h.update(hashlib.sha256((folder / rel).read_bytes()).digest())
    return h.hexdigest()


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return number
    return None


def rebuild(lake, ref: str, *, progress: Progress | None = None,
            max_shard_bytes: int = MAX_SHARD_BYTES) -> DatasetVersion:
    """Build ``ref``'s stored recipe again against the table versions it read.

    The new version's fingerprint and data files equal the original's when the code is
    the same; a different fingerprint means the build is not reproducible."""
    from curation.recipe import parse_recipe
    from curation.versions import get_version

    original = get_version(lake, ref)
    recipe = parse_recipe(original.recipe, source=f"{original.ref} recipe")
    return curate(lake, recipe, as_of=original.table_versions, progress=progress, max_shard_bytes=max_shard_bytes)
