"""Publishing dataset versions to a Hugging Face Hub: the real huggingface_hub and datasets clients
against the loopback Hub in tests/hub_server.py."""

import base64
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from datasets import Dataset, Image
from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url
from huggingface_hub.errors import RepositoryNotFoundError
from PIL import Image as PILImage

from curation.hub import (
    HubFolderEmpty,
    HubFolderMissing,
    HubRequestFailed,
    HubTagExists,
    HubTokenMissing,
    HubUnreachable,
    PushResult,
    push_folder,
)

# huggingface_hub 2.4 itself passes a file object as `data=` to httpx2 for LFS uploads.
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>' to upload raw bytes:DeprecationWarning")

REPO = "phoneloop/phone-sft"
CARD = """---
configs:
- config_name: sft
  data_files:
  - split: train
    path: sft/train-*.parquet
---
# phone-sft

Screens and instructions from phoneloop.
"""


def png(color: tuple[int, int, int], size=(4, 6)) -> bytes:
    buffer = io.BytesIO()
    PILImage.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def write_version(folder: Path, rows: list[tuple[str, bytes]], shard: str = "train-00000-of-00001") -> Path:
    """A dataset version folder as an export writes it: parquet shard(s), dataset card, report."""
    (folder / "sft").mkdir(parents=True)
    data = {"image": [{"bytes": b, "path": None} for _, b in rows], "text": [t for t, _ in rows]}
    Dataset.from_dict(data).cast_column("image", Image()).to_parquet(str(folder / "sft" / f"{shard}.parquet"))
    (folder / "README.md").write_text(CARD)
    (folder / "report.html").write_text("<html><body>3 episodes</body></html>")
    return folder


def load_from_hub(hub, tmp_path: Path, *revisions: str) -> dict[str, list[dict]]:
    """`load_dataset(REPO, "sft", revision=..., split="train")` in a fresh interpreter pointed at the loopback Hub.

    A subprocess because `datasets` and `huggingface_hub` read HF_ENDPOINT once, at import time.
    Images come back undecoded ({"bytes", "path"}) so the exact bytes can be compared.
    """
    script = textwrap.dedent(
        f"""
        import base64, json, sys
        from datasets import Image, load_dataset
        out = {{}}
        for revision in {list(revisions)!r}:
            ds = load_dataset({REPO!r}, "sft", revision=revision, split="train")
            ds = ds.cast_column("image", Image(decode=False))
            out[revision] = [{{"text": r["text"], "png": base64.b64encode(r["image"]["bytes"]).decode()}} for r in ds]
        json.dump(out, sys.stdout)
        """
    )
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_XET": "1"}
    env.pop("HF_TOKEN", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout)
    return {rev: [{"text": r["text"], "png": base64.b64decode(r["png"])} for r in rows] for rev, rows in loaded.items()}


def pixels(png_bytes: bytes) -> tuple[tuple[int, int], bytes]:
    image = PILImage.open(io.BytesIO(png_bytes)).convert("RGB")
    return image.size, image.tobytes()


@pytest.fixture
def rows_v1():
    return [("open settings", png((255, 0, 0))), ("tap wifi", png((0, 255, 0))), ("go back", png((0, 0, 255)))]


@pytest.fixture
def folder_v1(tmp_path, rows_v1):
    return write_version(tmp_path / "v1", rows_v1)


def test_pushed_version_loads_with_same_rows_and_image_bytes(hub, tmp_path, folder_v1, rows_v1):
    push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)

    loaded = load_from_hub(hub, tmp_path, "v1")["v1"]

    assert [r["text"] for r in loaded] == [t for t, _ in rows_v1]
    assert [r["png"] for r in loaded] == [b for _, b in rows_v1]
    assert [pixels(r["png"]) for r in loaded] == [pixels(b) for _, b in rows_v1]


def test_push_makes_one_commit_tagged_with_the_version(hub, folder_v1):
    result = push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)

    api = HfApi(endpoint=hub.url, token=hub.token)
    refs = api.list_repo_refs(REPO, repo_type="dataset")
    repo = hub.state.repos[("dataset", REPO)]
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1", result.commit_sha)]
    assert list(repo.commits) == [result.commit_sha]
    assert result == PushResult(
        repo_id=REPO,
        tag="v1",
        commit_sha=result.commit_sha,
        url=f"{hub.url}/datasets/{REPO}/tree/v1",
        files=("README.md", "report.html", "sft/train-00000-of-00001.parquet"),
    )
    assert sorted(api.list_repo_files(REPO, repo_type="dataset", revision="v1")) == list(result.files)


def test_push_sends_parquet_through_lfs_and_text_inline(hub, folder_v1):
    push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)

    files = hub.state.repos[("dataset", REPO)].files_at("v1")
    assert {path: f.lfs for path, f in files.items()} == {
        "README.md": False,
        "report.html": False,
        "sft/train-00000-of-00001.parquet": True,
    }
    shard = folder_v1 / "sft/train-00000-of-00001.parquet"
    assert files["sft/train-00000-of-00001.parquet"].data == shard.read_bytes()


def test_private_push_is_hidden_from_anonymous_readers(hub, folder_v1):
    push_folder(folder_v1, REPO, revision_tag="v1", private=True, token=hub.token, endpoint=hub.url)

    assert HfApi(endpoint=hub.url, token=hub.token).dataset_info(REPO, revision="v1").private is True
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url, token=False).dataset_info(REPO, revision="v1")


def test_loopback_hub_describes_lfs_files_like_the_hub(hub, folder_v1):
    push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)
    shard = folder_v1 / "sft/train-00000-of-00001.parquet"

    api = HfApi(endpoint=hub.url, token=hub.token)
    [info] = api.get_paths_info(REPO, ["sft/train-00000-of-00001.parquet"], repo_type="dataset", revision="v1")
    top = {entry.path for entry in api.list_repo_tree(REPO, repo_type="dataset", revision="v1")}
    url = hf_hub_url(REPO, "sft/train-00000-of-00001.parquet", repo_type="dataset", revision="v1", endpoint=hub.url)
    meta = get_hf_file_metadata(url)

    assert info.lfs.sha256 == meta.etag == hashlib.sha256(shard.read_bytes()).hexdigest()
    assert info.size == meta.size == shard.stat().st_size
    assert meta.commit_hash == hub.state.repos[("dataset", REPO)].tags["v1"]
    assert top == {"README.md", "report.html", "sft"}


def test_push_without_token_raises_before_any_request(hub, folder_v1, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    from huggingface_hub import get_token

    assert get_token() is None, "a stored Hugging Face login is visible to the tests; see tests/curation/conftest.py"

    with pytest.raises(HubTokenMissing, match="HF_TOKEN.*hf auth login"):
        push_folder(folder_v1, REPO, revision_tag="v1", endpoint=hub.url)
    assert hub.requests == []


def test_push_takes_token_and_endpoint_from_environment(hub, folder_v1, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", hub.token)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)

    result = push_folder(folder_v1, REPO, revision_tag="v1")

    assert result.url.startswith(hub.url)
    assert hub.state.repos[("dataset", REPO)].tags == {"v1": result.commit_sha}


def test_push_with_wrong_token_is_refused_by_the_hub(hub, folder_v1):
    with pytest.raises(HubRequestFailed, match="HTTP 401") as raised:
        push_folder(folder_v1, REPO, revision_tag="v1", token="hf_not_the_token", endpoint=hub.url)
    assert hub.url in str(raised.value)
    assert hub.state.repos == {}


def test_pushing_an_existing_tag_is_refused_and_changes_nothing(hub, tmp_path, folder_v1):
    first = push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)
    other = write_version(tmp_path / "other", [("something else", png((9, 9, 9)))], shard="train-new")
    before = len(hub.requests)

    with pytest.raises(HubTagExists, match=f"'v1' already exists on dataset {REPO}"):
        push_folder(other, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)

    repo = hub.state.repos[("dataset", REPO)]
    assert repo.tags == {"v1": first.commit_sha}
    assert list(repo.commits) == [first.commit_sha]
    writes = [r for r in hub.requests[before:] if r[0] in ("POST", "PUT") and r[1] != "/api/repos/create"]
    assert writes == []


def test_each_tag_loads_its_own_version(hub, tmp_path, folder_v1, rows_v1):
    rows_v2 = [("open camera", png((10, 20, 30), size=(8, 8))), ("take photo", png((200, 100, 0)))]
    folder_v2 = write_version(tmp_path / "v2", rows_v2, shard="train-00000-of-00001-v2")
    v1 = push_folder(folder_v1, REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)
    v2 = push_folder(folder_v2, REPO, revision_tag="v2", token=hub.token, endpoint=hub.url)

    loaded = load_from_hub(hub, tmp_path, "v1", "v2")

    assert v1.commit_sha != v2.commit_sha
    assert "sft/train-00000-of-00001.parquet" not in v2.files  # v1's shard is deleted in v2's commit
    assert [(r["text"], r["png"]) for r in loaded["v1"]] == rows_v1
    assert [(r["text"], r["png"]) for r in loaded["v2"]] == rows_v2


def test_push_missing_folder_is_refused(hub, tmp_path):
    with pytest.raises(HubFolderMissing, match="nowhere"):
        push_folder(tmp_path / "nowhere", REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)
    assert hub.requests == []


def test_push_folder_with_only_hidden_files_is_refused(hub, tmp_path):
    (tmp_path / "empty" / ".cache").mkdir(parents=True)
    (tmp_path / "empty" / ".cache" / "upload.lock").write_text("")
    with pytest.raises(HubFolderEmpty, match="empty"):
        push_folder(tmp_path / "empty", REPO, revision_tag="v1", token=hub.token, endpoint=hub.url)
    assert hub.requests == []


def test_push_to_unreachable_endpoint_names_it(folder_v1):
    with socket.socket() as s:  # a port nothing listens on once the socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.raises(HubUnreachable, match=f"cannot reach the Hugging Face Hub at {endpoint}"):
        push_folder(folder_v1, REPO, revision_tag="v1", token="hf_any", endpoint=endpoint)
