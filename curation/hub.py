"""Publish a dataset version folder to the Hugging Face Hub as one commit plus a tag.

    >>> result = push_folder(Path("exports/phone-sft-v3"), "acme/phone-sft", revision_tag="v3")
    >>> result.url
    'https://huggingface.co/datasets/acme/phone-sft/tree/v3'

The folder is what an export writes: parquet shards under subfolders (one per config), a `README.md`
dataset card whose YAML front matter declares the `configs:`, and a `report.html`. After the push,
`datasets.load_dataset("acme/phone-sft", "sft", revision="v3")` reads exactly that folder:

- The commit makes the repo's tree equal to the folder: files the folder lacks are deleted in the same
  commit (`.gitattributes` is kept), so a glob like `sft/train-*.parquet` never picks up an older
  version's shards. Hidden files and folders (`.git`, `.cache`, ...) are not uploaded.
- All files go in one commit (`HfApi.create_commit`; `upload_folder` may split a large folder into
  several commits when Xet is on). If the folder equals the branch head, no commit is made and the tag
  points at the head.
- Tags are immutable: when `revision_tag` already exists the push is refused with `HubTagExists`
  before anything is uploaded, and the repo is left as it was.

Configuration:
- Token: the `token` argument, else `HF_TOKEN`, else the token stored by `hf auth login`. Without one,
  `HubTokenMissing` is raised before any network call.
- Endpoint: the `endpoint` argument, else `HF_ENDPOINT`, else https://huggingface.co.
- With `hf_xet` installed, uploads go through Xet storage. A Hub without Xet (a mirror, the test
  suite's loopback server) needs `HF_HUB_DISABLE_XET=1` in the environment *before* `huggingface_hub`
  is first imported (it reads the variable once, at import); then the classic LFS protocol is used.
- Loading back from a non-default Hub: `datasets` and `huggingface_hub` take `HF_ENDPOINT` at import
  time, so set it in the environment before starting Python.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2  # the HTTP client huggingface_hub uses; its transport errors mean "could not connect"
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError

DEFAULT_ENDPOINT = "https://huggingface.co"
KEPT_REMOTE_FILES = frozenset({".gitattributes"})  # managed by the Hub, never deleted by a push


class HubError(Exception):
    """Base class for errors while publishing to the Hub."""


class HubTokenMissing(HubError):
    """No Hugging Face token in the argument, HF_TOKEN, or the stored login."""


class HubTagExists(HubError):
    """The requested tag already names a version of the dataset repo."""


class HubFolderMissing(HubError):
    """The folder to publish does not exist or is not a directory."""


class HubFolderEmpty(HubError):
    """The folder to publish holds no (non-hidden) files."""


class HubUnreachable(HubError):
    """The Hub endpoint could not be reached (connection refused, DNS, timeout)."""


class HubRequestFailed(HubError):
    """The Hub answered a request with an HTTP error (bad token, no write access, invalid card, ...)."""


@dataclass(frozen=True)
class PushResult:
    repo_id: str
    tag: str
    commit_sha: str
    url: str  # the tree of the tagged version, browsable on the Hub
    files: tuple[str, ...]  # repo paths now present at the tag, sorted


def push_folder(
    folder: Path,
    repo_id: str,
    *,
    revision_tag: str,
    private: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    commit_message: str | None = None,
) -> PushResult:
    """Upload `folder` to the dataset repo `repo_id` in one commit and tag that commit `revision_tag`.

    Creates the repo if missing (`private` only applies then). See the module docstring for the
    token, endpoint and Xet settings and for what happens to files already in the repo.
    """
    files = folder_files(Path(folder))
    token = resolve_token(token)
    endpoint = resolve_endpoint(endpoint)
    api = HfApi(endpoint=endpoint, token=token)
    with _hub_errors(endpoint, repo_id):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        existing_tags = {ref.name for ref in api.list_repo_refs(repo_id, repo_type="dataset").tags}
        if revision_tag in existing_tags:
            raise HubTagExists(
                f"tag {revision_tag!r} already exists on dataset {repo_id} at {endpoint}; nothing pushed"
            )
        remote = set(api.list_repo_files(repo_id, repo_type="dataset"))
        operations = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in files.items()]
        stale = sorted(remote - files.keys() - KEPT_REMOTE_FILES)
        operations += [CommitOperationDelete(path_in_repo=p) for p in stale]
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=commit_message or f"Publish dataset version {revision_tag}",
            repo_type="dataset",
        )
        try:
            api.create_tag(repo_id, tag=revision_tag, revision=commit.oid, repo_type="dataset")
        except HfHubHTTPError as e:
            if e.response is not None and e.response.status_code == 409:
                raise HubTagExists(
                    f"tag {revision_tag!r} was created on dataset {repo_id} by someone else while pushing;"
                    f" commit {commit.oid} is on main but untagged"
                ) from e
            raise
    kept = remote & KEPT_REMOTE_FILES
    return PushResult(
        repo_id=repo_id,
        tag=revision_tag,
        commit_sha=commit.oid,
        url=f"{endpoint}/datasets/{repo_id}/tree/{revision_tag}",
        files=tuple(sorted(files.keys() | kept)),
    )


def push_version(lake, dv, repo_id: str, *, private: bool = False, token: str | None = None) -> PushResult:
    """Push dataset version ``dv`` of ``lake`` (tag ``<name>-v<N>``). A version in object
    storage (an ``s3://`` lake) is first downloaded, through the lake's ``storage_options``,
    into a temporary folder that is removed afterwards; a local one is pushed from its folder."""
    from datalake import storage

    tag = f"{dv.name}-v{dv.version}"
    if not storage.is_remote(dv.path):
        return push_folder(Path(dv.path), repo_id, revision_tag=tag, private=private, token=token)
    resolve_token(token)  # no token: fail before downloading anything
    staging = Path(tempfile.mkdtemp(prefix="phoneloop-push-"))
    try:
        try:
            storage.download_folder(dv.path, staging, lake.storage_options)
        except OSError as exc:
            raise HubFolderMissing(f"{dv.ref}: cannot download its folder {dv.path}: {exc}") from None
        return push_folder(staging, repo_id, revision_tag=tag, private=private, token=token)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def folder_files(folder: Path) -> dict[str, Path]:
    """Repo path -> local file for every non-hidden file under `folder`, sorted by repo path."""
    if not folder.is_dir():
        raise HubFolderMissing(f"dataset folder {folder} does not exist or is not a directory")
    files = {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }
    if not files:
        raise HubFolderEmpty(f"dataset folder {folder} holds no files to publish")
    return files


def resolve_token(token: str | None) -> str:
    """The argument, else HF_TOKEN, else the stored login; raises HubTokenMissing without touching the network."""
    token = token or get_token()
    if not token:
        raise HubTokenMissing(
            "no Hugging Face token: pass token=, set HF_TOKEN, or run `hf auth login` (needs write access)"
        )
    return token


def resolve_endpoint(endpoint: str | None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


@contextmanager
def _hub_errors(endpoint: str, repo_id: str):
    """Turn huggingface_hub's transport and HTTP errors into HubUnreachable / HubRequestFailed naming the endpoint."""
    try:
        yield
    except httpx2.TransportError as e:
        raise HubUnreachable(f"cannot reach the Hugging Face Hub at {endpoint}: {e}") from e
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else "?"
        raise HubRequestFailed(f"Hub at {endpoint} refused a request for dataset {repo_id} (HTTP {status}): {e}") from e
