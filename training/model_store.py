"""Checkpoints of a lake on object storage: uploaded to the lake, downloaded once where they are used.

A local lake keeps a model where it was trained (``<lake>/models/<name>/final``). A lake in
a bucket (``s3://...``, gs://, az://) is shared by machines that share no disk, so
registering a model there first uploads its folder (``publish``) to
``<lake>/models/<name>/<id>/`` through the lake's ``storage_options`` (the credentials of
its tables): every file, then ``phoneloop_manifest.json`` (each file's path, size and
sha256) last. The registry row is appended only after the manifest is stored, so a half
upload is never registered; an interrupted upload leaves an unregistered folder, and a
retry writes the same one again (``<id>`` is a hash of the manifest's file list).

Loading a registered model whose path is remote (``local_copy``, called by
``registry.resolve_model``, which every loader goes through) downloads it once into
``$PHONELOOP_CACHE/registered/<name>-<key>``: into a staging folder, each file checked
against the manifest's size and sha256, renamed into place when all are there. A cached
copy is used as long as its files have the manifest's sizes. The machine that uploaded
a model seeds that cache with hard links to the uploaded folder, so it never downloads
its own model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from datalake.storage import inside
from training.errors import ModelNotFound, TrainingError

MANIFEST = "phoneloop_manifest.json"


def publish(lake, name: str, folder: str | os.PathLike) -> str:
    """Upload ``folder`` to ``<lake>/models/<name>/<id>`` (manifest last); its URI."""
    from datalake.storage import filesystem, upload_folder

    folder = Path(folder)
    manifest = _manifest(folder)
    uri = f"{lake.uri.rstrip('/')}/models/{name}/{_id(manifest)}"
    try:
        upload_folder(folder, uri, lake.storage_options)
        fs, root = filesystem(uri, lake.storage_options)
        with fs.open_output_stream(f"{root}/{MANIFEST}") as out:
            out.write(json.dumps(manifest, indent=1).encode())
    except (OSError, ValueError) as exc:
        raise TrainingError(f"model {name!r}: cannot upload {folder} to {uri}: {exc}") from None
    _seed_cache(folder, cache_folder(name, uri), manifest)
    return uri


def local_copy(name: str, uri: str, storage_options: dict[str, str] | None) -> Path:
    """A local folder holding registered model ``name`` stored at ``uri``, downloaded (verified) once."""
    from datalake.storage import filesystem

    target = cache_folder(name, uri)
    if _complete(target):
        return target
    try:
        fs, root = filesystem(uri, storage_options)
        with fs.open_input_stream(f"{root}/{MANIFEST}") as f:
            manifest = json.loads(f.read())
    except (OSError, ValueError) as exc:
        raise ModelNotFound(f"model {name!r}: {uri} has no readable {MANIFEST} (an upload that did not finish, "
                            f"or no access): {type(exc).__name__}: {exc}") from None
    files = _checked_files(name, uri, manifest)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
    try:
        for entry in files:
            _download(fs, f"{root}/{entry['path']}", staging / entry["path"], entry, name)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
        staging.rename(target)
    except (OSError, TrainingError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if _complete(target):  # another process finished the same download first
            return target
        if isinstance(exc, TrainingError):
            raise
        raise TrainingError(f"model {name!r}: cannot download {uri} to {target}: {exc}") from None
    return target


def cache_folder(name: str, uri: str) -> Path:
    from training.data import cache_root, lake_key

    return cache_root() / "registered" / f"{name}-{lake_key(uri)}"


def _manifest(folder: Path) -> dict:
    files = [{"path": p.relative_to(folder).as_posix(), "size": p.stat().st_size, "sha256": _sha256(p)}
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST]
    if not files:
        raise TrainingError(f"{folder} holds no files to upload")
    return {"version": 1, "files": files}


def _id(manifest: dict) -> str:
    return hashlib.sha256(json.dumps(manifest["files"], sort_keys=True).encode()).hexdigest()[:16]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _checked_files(name: str, uri: str, manifest: dict) -> list[dict]:
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, list) or not files:
        raise ModelNotFound(f"model {name!r}: {uri}/{MANIFEST} lists no files")
    for entry in files:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if not inside(rel) or rel == MANIFEST:
            raise ModelNotFound(f"model {name!r}: {uri}/{MANIFEST} names a file outside its folder: {rel!r}")
    return files


def _download(fs, source: str, dest: Path, entry: dict, name: str) -> None:
    """Copy one file, checking its size and sha256 against the manifest's."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    with fs.open_input_stream(source) as src, open(dest, "wb") as out:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    if size != entry.get("size") or digest.hexdigest() != entry.get("sha256"):
        raise TrainingError(f"model {name!r}: {source} is not the file that was uploaded ({size} bytes, "
                            f"sha256 {digest.hexdigest()[:12]}; the manifest says {entry.get('size')} bytes, "
                            f"{str(entry.get('sha256'))[:12]})")


def _complete(target: Path) -> bool:
    """A cached copy with its manifest and every file at the manifest's size."""
    try:
        manifest = json.loads((target / MANIFEST).read_text())
        return all((target / e["path"]).stat().st_size == e["size"] for e in manifest["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _seed_cache(folder: Path, target: Path, manifest: dict) -> None:
    """Hard links (or copies, across filesystems) of the uploaded folder as its cached copy."""
    if _complete(target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".seed-", dir=target.parent))
    try:
        for entry in manifest["files"]:
            (staging / entry["path"]).parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(folder / entry["path"], staging / entry["path"])
            except OSError:
                shutil.copy2(folder / entry["path"], staging / entry["path"])
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
        staging.rename(target)
    except OSError:
        pass  # only a cache: a later load downloads the model instead
    finally:
        shutil.rmtree(staging, ignore_errors=True)
