"""Small files beside the Delta tables (the lake's marker) on any storage deltalake reads.

Delta tables get their credentials from ``storage_options`` (object_store's keys, e.g.
``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ``AWS_ALLOW_HTTP``); the marker is a plain
file, read and written with pyarrow's filesystems built from the *same* options (and,
as object_store does, from the standard environment variables when an option is not
given), so one set of credentials reaches both.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

import pyarrow.fs as pafs

_S3 = {  # pyarrow S3FileSystem argument <- object_store option names (any case), then env vars
    "access_key": ("aws_access_key_id", "access_key_id"),
    "secret_key": ("aws_secret_access_key", "secret_access_key"),
    "session_token": ("aws_session_token", "session_token", "aws_token"),
    "region": ("aws_region", "region", "aws_default_region"),
    "endpoint_override": ("aws_endpoint_url", "aws_endpoint", "endpoint_url", "endpoint"),
}


def _option(options: dict[str, str], names: tuple[str, ...]) -> str | None:
    lowered = {k.lower(): v for k, v in options.items()}
    for name in names:
        if lowered.get(name):
            return lowered[name]
    for name in names:
        if os.environ.get(name.upper()):
            return os.environ[name.upper()]
    return None


def filesystem(uri: str, storage_options: dict[str, str] | None = None) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) for a lake URI: a local path, s3://, gs:// or az:// (abfs)."""
    options = storage_options or {}
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        kwargs = {arg: value for arg, names in _S3.items() if (value := _option(options, names))}
        endpoint = kwargs.get("endpoint_override")
        if endpoint:
            scheme, _, host = endpoint.partition("://")
            kwargs["endpoint_override"] = host or scheme
            kwargs["scheme"] = scheme if host else "https"
        allow_http = (_option(options, ("aws_allow_http", "allow_http")) or "").lower() == "true"
        if kwargs.get("scheme") == "http" and not allow_http:
            raise ValueError(f"{uri}: the endpoint {endpoint} is plain http; set AWS_ALLOW_HTTP=true to allow it")
        kwargs.setdefault("region", "us-east-1")
        return pafs.S3FileSystem(**kwargs), f"{parsed.netloc}{parsed.path}".rstrip("/")
    return pafs.FileSystem.from_uri(uri)


_CREDENTIAL_SOURCES = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
                       "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def missing_credentials(uri: str, storage_options: dict[str, str] | None = None) -> str | None:
    """For an s3:// lake with no credentials anywhere the AWS SDK looks (options, ``AWS_*`` keys,
    a profile, a credentials file, web identity or container credentials), what to set; else None.
    Instance roles are not visible from here, so callers use this only to explain a failure."""
    if urlparse(uri).scheme not in ("s3", "s3a"):
        return None
    options = storage_options or {}
    if _option(options, _S3["access_key"]) or (_option(options, ("aws_skip_signature", "skip_signature")) or
                                               "").lower() == "true":
        return None
    if any(os.environ.get(name) for name in _CREDENTIAL_SOURCES):
        return None
    files = [os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.expanduser("~/.aws/credentials"),
             os.environ.get("AWS_CONFIG_FILE") or os.path.expanduser("~/.aws/config")]
    if any(os.path.isfile(f) for f in files):
        return None
    return ("no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE with "
            "~/.aws/credentials, or pass them in storage_options)")


def with_defaults(uri: str, storage_options: dict[str, str] | None) -> dict[str, str] | None:
    """``storage_options`` plus what safe concurrent appends need on S3.

    Delta on S3 needs a commit mechanism that makes "create the next log entry" atomic
    across writers. phoneloop uses S3 conditional puts (``conditional_put=etag``:
    object_store's If-Match/If-None-Match writes, supported by AWS S3 and by
    S3-compatible servers such as MinIO and moto) unless the caller configured a lock
    provider (``AWS_S3_LOCKING_PROVIDER=dynamodb``) or a conditional-put mode
    themselves, in the options or the environment.
    """
    if urlparse(uri).scheme not in ("s3", "s3a"):
        return storage_options
    options = dict(storage_options or {})
    keys = {k.lower() for k in options} | {k.lower() for k in os.environ if k.startswith("AWS_")}
    if not keys & {"conditional_put", "aws_conditional_put", "aws_s3_locking_provider", "s3_locking_provider"}:
        options["conditional_put"] = "etag"
    return options


def inside(rel: object) -> bool:
    """Whether ``rel`` names a file inside its folder: a non-empty relative POSIX path with no
    ``..`` (or ``.``) part and no backslash (manifests and export lists are checked with this
    before a name is joined to a bucket prefix or a local cache folder)."""
    if not isinstance(rel, str):
        return False
    parts = PurePosixPath(rel).parts
    return bool(parts) and not rel.startswith("/") and "\\" not in rel and not any(p in ("..", ".") for p in parts)


def is_remote(uri: str) -> bool:
    """An object-store URI (s3://, gs://, az://, abfs://...), not a local folder."""
    return "://" in str(uri) and urlparse(str(uri)).scheme not in ("", "file")


def missing_bucket(uri: str, storage_options: dict[str, str] | None = None) -> str | None:
    """The bucket an ``s3://`` URI names when the server says it does not exist; None when
    it exists, for other URIs, or when the server does not tell (e.g. refused credentials)."""
    if urlparse(uri).scheme not in ("s3", "s3a"):
        return None
    try:
        fs, path = filesystem(uri, storage_options)
        bucket = path.split("/", 1)[0]
        return bucket if fs.get_file_info(bucket).type == pafs.FileType.NotFound else None
    except (OSError, ValueError):
        return None


def exists(uri: str, storage_options: dict[str, str] | None = None) -> bool:
    """Anything stored at ``uri``: a file, or a folder (a prefix with objects under it)."""
    fs, path = filesystem(uri, storage_options)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.File:
        return True
    if info.type == pafs.FileType.Directory:
        return bool(fs.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=False)))
    return False


def upload_folder(folder: str | os.PathLike, uri: str, storage_options: dict[str, str] | None = None,
                  threads: int = 8) -> None:
    """Copy a local folder's files to ``uri`` (``pyarrow.fs.copy_files``, ``threads`` uploads at once)."""
    fs, path = filesystem(uri, storage_options)
    pafs.copy_files(str(folder), path, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs,
                    use_threads=threads > 1)


def download_folder(uri: str, folder: str | os.PathLike, storage_options: dict[str, str] | None = None,
                    threads: int = 8) -> None:
    """Copy every file under ``uri`` into the local ``folder`` (``pyarrow.fs.copy_files``);
    raises FileNotFoundError when nothing is stored there."""
    fs, path = filesystem(uri, storage_options)
    if fs.get_file_info(path).type != pafs.FileType.Directory or not exists(uri, storage_options):
        raise FileNotFoundError(f"nothing stored at {uri}")
    pafs.copy_files(path, str(folder), source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem(),
                    use_threads=threads > 1)


def remove_folder(uri: str, storage_options: dict[str, str] | None = None) -> None:
    fs, path = filesystem(uri, storage_options)
    try:
        fs.delete_dir(path)
    except (FileNotFoundError, OSError):
        pass


def read_bytes(uri: str, storage_options: dict[str, str] | None = None) -> bytes | None:
    """A file's bytes, or None when there is none."""
    fs, path = filesystem(uri, storage_options)
    try:
        with fs.open_input_stream(path) as f:
            return f.read()
    except (FileNotFoundError, OSError):
        return None


def resolve_folder(lake_uri: str, stored: str) -> str:
    """Where a stored dataset folder is now. Relative (since issue 31): under the lake root.
    Absolute (older versions): as stored when it is inside the lake's present root, else
    the same ``datasets/<name>/<folder>`` under that root (the lake moved)."""
    return resolve_in_lake(lake_uri, stored, "datasets")


def resolve_in_lake(lake_uri: str, stored: str, top: str) -> str:
    """Where a path stored in the lake (a dataset folder under ``datasets/``, a checkpoint
    under ``models/``) is now: a relative one under the lake's present root; an absolute one
    (written before paths were stored relative) as stored when it is inside that root, else
    the same ``<top>/...`` tail under it (the lake moved); anything else as stored."""
    root = str(lake_uri or "").rstrip("/")
    if not stored or not root:
        return stored or ""
    if not is_remote(stored) and not stored.startswith("/"):
        return f"{root}/{stored}"
    if stored.startswith(root + "/"):
        return stored
    tail = stored.rstrip("/").rsplit(f"/{top}/", 1)
    return f"{root}/{top}/{tail[1]}" if len(tail) == 2 and inside(tail[1]) else stored


def relative_in_lake(lake_uri: str, path: str) -> str | None:
    """``path`` relative to the lake root when it lies inside it (what the lake stores, so
    that it can move), else None. Local paths are compared resolved (symlinks, ``..``)."""
    root, target = str(lake_uri or "").rstrip("/"), str(path)
    if not root:
        return None
    if is_remote(root) or is_remote(target):
        rel = target[len(root) + 1:] if target.startswith(root + "/") else None
    else:
        try:
            rel = Path(target).resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            rel = None
    return rel if inside(rel) else None
