"""Build a dataset version from a recipe: select -> ops -> split -> exports -> register.

1. Pin the lake: every read goes through ``lake.as_of(versions)``, and the versions
   are stored with the dataset, so a rebuild reads exactly the same rows.
2. Select: run the recipe's SQL (it must return ``episode_id``); keep only training
   episodes (``purpose = 'eval'`` ones, recorded by ``phoneloop eval``, are left out
   unless the recipe says ``include_eval: true``); load them from ``episodes_resolved``
   and ``steps_resolved`` (human judgements and corrections applied).
3. Ops: apply each op in order, logging episodes/steps in and out and per-app/source counts.
4. Split: seeded and leak-free (whole tasks or apps go to one split).
5. Export: write each format's shards into a hidden temporary folder, then the
   dataset card, the report, ``redactions.jsonl`` and ``manifest.json``.
6. Fingerprint: sha256 over the recipe, the table versions and every data file.
7. Publish: rename the folder to ``v<N>-<fp>`` and append one row to ``datasets``. Any
   failure before this point removes the folder: no half-made version is registered.

``rebuild`` runs 1-6 into a temporary folder, compares the fingerprint with the stored
one and removes the folder: it verifies a version without registering another.
"""

from __future__ import annotations

from collections import Counter

import hashlib
import json
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Callable

import duckdb

from curation import workset
from curation.card import public_recipe, render_card
from curation.errors import CurationError, EmptySelection, RecipeError, UnredactedRealEpisodes, VersionUnrebuildable
from curation.exports import MAX_SHARD_BYTES, json_dumps, write_export
from curation.ops import OPS
from curation.ops.balance import SPLIT_RULE, assign_splits
from curation.ops.base import Context
from curation.ops.redact import redaction_summary
from curation.recipe import EXCLUDES, Recipe
from curation.report import render_report
from curation.versions import (DatasetVersion, dataset_dir, datasets_root, list_versions, next_version, register,
                               relative_folder)
from datalake import storage
from datalake.schema import now

Progress = Callable[[str, int, int], None]  # (what, done, total)
READ_TABLES = ("episodes", "steps", "frames", "annotations")  # what a build reads, and pins


def curate(lake, recipe: Recipe, *, as_of: dict[str, int] | None = None, progress: Progress | None = None,
           max_shard_bytes: int = MAX_SHARD_BYTES, allow_unredacted: bool = False) -> DatasetVersion:
    """Build and register the next version of ``recipe.name``. Exports of real-phone
    episodes that no redact op scanned are refused (``UnredactedRealEpisodes``) unless
    ``allow_unredacted``."""
    prepared = prepare(lake, recipe, as_of=as_of, progress=progress)
    unscanned = unscanned_real_episodes(prepared[1], prepared[5])
    if unscanned and not allow_unredacted:
        raise UnredactedRealEpisodes(
            f"{recipe.source}: {unscanned} real-phone episodes would be exported without a redact op scanning them "
            "for personal data (or with blur: false); add `- op: redact` to the recipe, or pass --allow-unredacted; "
            "nothing written")
    return publish(lake, *prepared, progress, max_shard_bytes)


def unscanned_real_episodes(ws, details: dict) -> int:
    """Real-phone episodes in ``ws`` that no redact op scanned, or whose pixels it left as they were."""
    blurred = details.get("redact", {}).get("blur", True)  # `blur: false` leaves the pixels as they were
    return sum(e.phone == "real" and (e.unredacted is None or not blurred) for e in ws)


def prepare(lake, recipe: Recipe, *, as_of: dict[str, int] | None = None, progress: Progress | None = None,
            split_rule: str = SPLIT_RULE):
    """Select, load, apply the ops and split (by ``split_rule``, recorded in the manifest
    and the version's row): everything before the files are written."""
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
    splits = assign_splits(ws, **recipe.split, rule=split_rule)
    details["split"] = {"rule": split_rule, **recipe.split,
                        "position": "sha256(f'{seed}:{group key}') in [0, 1), bands in the fractions' order"
                        if split_rule == "hash" else "rank in a seeded order of all group keys"}
    return recipe, ws, ctx, table_versions, ops_log, details, splits


def select(snapshot, recipe: Recipe) -> list[str]:
    """Episode ids the recipe's SQL returns, each once, in ingest order (so "keep the
    first" in dedup means the earliest ingested)."""
    sql = recipe.select.strip().rstrip(";")
    where = [] if recipe.include_eval else ["e.purpose IS DISTINCT FROM 'eval'"]
    if recipe.verified_by:  # names are checked against VERIFIED_BY when the recipe is parsed
        where.append("e.verified_by IN (" + ", ".join(f"'{v}'" for v in recipe.verified_by) + ")")
    where += [f"NOT e.{EXCLUDES[name]}" for name in recipe.exclude]
    condition = f"WHERE {' AND '.join(where)} " if where else ""
    try:
        rows = snapshot.sql(f"SELECT e.episode_id FROM episodes_resolved e SEMI JOIN ({sql}) AS selection "
                            f"USING (episode_id) {condition}ORDER BY e.created_at, e.batch_id, e.batch_seq")
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0]
        if "episode_id" in message:
            message = "the select query must return an episode_id column"
        raise RecipeError(f"select: {message}", line=_line_of(recipe.text, "select"), source=recipe.source) from None
    ids = [i for i in rows.column(0).to_pylist() if i is not None]
    if not ids:
        which = "" if recipe.include_eval else " (evaluation episodes are left out without include_eval: true)"
        raise EmptySelection(f"{recipe.source}: the select query matched no episodes{which}")
    return ids


def publish(lake, recipe, ws, ctx, table_versions, ops_log, details, splits, progress, max_shard_bytes):
    version = next_version(lake, recipe.name)
    parents = [v.ref for v in list_versions(lake, recipe.name)][-1:]
    remote = storage.is_remote(lake.uri)  # an object-store lake: build in a local folder, then upload it
    tmp = Path(tempfile.mkdtemp(prefix="phoneloop-dataset-")) if remote else \
        datasets_root(lake) / recipe.name / f".tmp-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        exports, fingerprint, counts = write_folder(tmp, f"{recipe.name}@v{version}", recipe, ws, ctx,
                                                    table_versions, ops_log, details, splits, progress,
                                                    max_shard_bytes, parents=parents)
        final = _place(lake, tmp, recipe.name, version, fingerprint, remote)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    dv = DatasetVersion(name=recipe.name, version=version, fingerprint=fingerprint, recipe=recipe.text,
                        parents=parents, table_versions=table_versions, counts=counts,
                        exports={"path": relative_folder(lake.uri, final), "formats": exports, "report": "report.html",
                                 "card": "README.md", "split_rule": details.get("split", {}).get("rule", SPLIT_RULE)},
                        root=lake.uri)
    try:
        register(lake, dv, now())
    except BaseException:
        if remote:
            storage.remove_folder(final, lake.storage_options)
        else:
            shutil.rmtree(final, ignore_errors=True)
        raise
    return dv


def _place(lake, tmp: Path, name: str, version: int, fingerprint: str, remote: bool) -> Path | str:
    """Move the finished folder to ``<lake>/datasets/<name>/v<N>-<fp>``: a rename on a local
    lake; on object storage an upload of its files (the row registered afterwards is what
    makes the version exist, so a half-uploaded folder is never read as a dataset)."""
    if not remote:
        final = dataset_dir(lake, name, version, fingerprint)
        if final.exists():
            raise CurationError(f"{final} already exists: another build registered {name}@v{version} meanwhile; "
                                "run again")
        tmp.rename(final)
        return final
    final_uri = f"{lake.uri.rstrip('/')}/datasets/{name}/v{version}-{fingerprint[:12]}"
    if storage.exists(final_uri, lake.storage_options):
        raise CurationError(f"{final_uri} already exists: another build registered {name}@v{version} meanwhile; "
                            "run again")
    try:
        storage.upload_folder(tmp, final_uri, lake.storage_options)
    except OSError as exc:
        storage.remove_folder(final_uri, lake.storage_options)
        raise CurationError(f"uploading {name}@v{version} to {final_uri} failed: {exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final_uri


def write_folder(tmp: Path, ref: str, recipe, ws, ctx, table_versions, ops_log, details, splits, progress,
                 max_shard_bytes, parents: list[str]):
    """Exports, card, report, redaction record, recipe and manifest into ``tmp``;
    returns (exports, fingerprint, counts)."""
    exports = _write_exports(recipe, ws, ctx, tmp, progress, max_shard_bytes)
    fingerprint = _fingerprint(recipe, table_versions, tmp, exports)
    counts = {"episodes": len(ws), "steps": sum(len(e.steps) for e in ws),
              "splits": {s: {"episodes": sum(e.split == s for e in ws),
                             "steps": sum(len(e.steps) for e in ws if e.split == s)} for s in splits},
              "ops": [{"op": e["op"], "episodes_out": e["out"]["episodes"], "steps_out": e["out"]["steps"]}
                      for e in ops_log]}
    (tmp / "README.md").write_text(render_card(ref, recipe, fingerprint, table_versions, counts, exports,
                                               parents, ops_log), encoding="utf-8")
    (tmp / "report.html").write_text(render_report(ref, ws, ops_log, details, shown_frames(ws, ctx)),
                                     encoding="utf-8")
    records = details.get("redact", {}).pop("redaction_records", [])
    (tmp / "redactions.jsonl").write_text(redaction_summary(records))
    (tmp / "recipe.yaml").write_text(public_recipe(recipe.text), encoding="utf-8")  # masked, like the card
    unscanned = unscanned_real_episodes(ws, details)
    (tmp / "manifest.json").write_text(json_dumps({"ref": ref, "fingerprint": fingerprint, "counts": counts,
                                                   "parents": parents, "table_versions": table_versions,
                                                   "split_rule": details.get("split"),
                                                   "software": software_versions(), "ops": ops_log,
                                                   "details": details, "unredacted_real_episodes": unscanned,
                                                   # what each version adds (datasets diff): by source and phone
                                                   "sources": dict(sorted(Counter(e.source for e in ws).items())),
                                                   "phones": dict(sorted(Counter(e.phone for e in ws).items())),
                                                   # what an evaluation must not overlap (datalake.tasksets)
                                                   "instances": sorted({e.meta["instance"] for e in ws
                                                                        if isinstance(e.meta.get("instance"), str)})}))
    return exports, fingerprint, counts


def shown_frames(ws, ctx) -> Callable[[str], bytes | None]:
    """Frame sha -> the PNG as exported (redacted when redaction touched it), or None for
    frames that are not in the result (e.g. a dropped near-duplicate, never redacted):
    the report shows only what the exports show."""
    images: dict[str, bytes | None] = {}
    for e in ws:
        for s in e.trajectory:
            if s.image is not None:
                images[s.frame_sha] = s.image
            else:
                images.setdefault(s.frame_sha, None)

    def frame(sha: str) -> bytes | None:
        if sha not in images:
            return None
        return images[sha] if images[sha] is not None else ctx.frame(sha)
    return frame


def software_versions() -> dict[str, str | None]:
    """phoneloop's version, its git commit (when it runs from a checkout) and the versions
    of the libraries that decide the bytes of a dataset."""
    from importlib.metadata import PackageNotFoundError, version

    from datalake.version import __version__

    out: dict[str, str | None] = {"phoneloop": __version__, "git_commit": _git_commit()}
    for dist in ("deltalake", "duckdb", "pyarrow", "datasets", "Pillow", "phonenumbers", "python-stdnum",
                 "rapidocr", "onnxruntime"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def _git_commit() -> str | None:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=10, check=False).stdout.strip()
    return done.stdout.strip() + ("-dirty" if dirty else "")


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
            max_shard_bytes: int = MAX_SHARD_BYTES) -> dict:
    """Build ``ref``'s stored recipe again against the table versions it read, in a
    temporary folder that is removed afterwards; nothing is registered.

    Returns the original and rebuilt fingerprints, ``same`` and the data files whose
    bytes differ (when the original folder is still there). A different fingerprint
    means the build is not reproducible (see the manifest's ``software`` versions)."""
    from curation.recipe import parse_recipe
    from curation.versions import get_version

    original = get_version(lake, ref)
    lost = lost_tables(lake, original.table_versions)
    if lost:
        raise VersionUnrebuildable(
            f"{original.ref} cannot be rebuilt: the lake no longer holds the files of {', '.join(lost)} "
            "(a forced `lake compact --vacuum` removed them); its exports are still in "
            f"{original.path or 'its folder'}")
    recipe = parse_recipe(original.recipe, source=f"{original.ref} recipe")
    # versions made before the split rule was recorded were split by rank
    prepared = prepare(lake, recipe, as_of=original.table_versions, progress=progress,
                       split_rule=original.exports.get("split_rule", "rank"))
    remote = storage.is_remote(lake.uri)
    tmp = Path(tempfile.mkdtemp(prefix="phoneloop-rebuild-")) if remote else \
        datasets_root(lake) / recipe.name / f".rebuild-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        exports, fingerprint, counts = write_folder(tmp, original.ref, *prepared, progress, max_shard_bytes,
                                                    parents=original.parents)
        differing = _differing_files(original.path, tmp, exports, lake.storage_options if remote else None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"ref": original.ref, "fingerprint": fingerprint, "original_fingerprint": original.fingerprint,
            "same": fingerprint == original.fingerprint, "counts": counts, "differing_files": differing}


def lost_tables(lake, table_versions: dict[str, int]) -> list[str]:
    """``table vN`` for each pinned table version whose log or data files are gone."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError

    lost = []
    for table, version in sorted(table_versions.items()):
        try:
            files = DeltaTable(lake.table_uri(table), version=int(version),
                               storage_options=lake.storage_options).file_uris()
        except (DeltaError, OSError, ValueError):  # the version's log entry is gone
            lost.append(f"{table} v{version}")
            continue
        if any(not storage.exists(uri, lake.storage_options) for uri in files):
            lost.append(f"{table} v{version}")
    return lost


def _differing_files(original: str, rebuilt: Path, exports: dict, storage_options: dict | None = None) -> list[str]:
    files = sorted(rel for splits in exports.values() for info in splits.values() for rel in info["files"])
    if storage.is_remote(original):
        return [rel for rel in files
                if storage.read_bytes(f"{original.rstrip('/')}/{rel}", storage_options) != (rebuilt / rel).read_bytes()]
    folder = Path(original)
    return [rel for rel in files
            if not (folder / rel).is_file() or (folder / rel).read_bytes() != (rebuilt / rel).read_bytes()]
