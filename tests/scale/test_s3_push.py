"""`phoneloop datasets push` from a lake in S3-compatible storage (moto on 127.0.0.1) to the
loopback Hub (tests/hub_server.py): the version's folder comes out of the bucket and every
file of it lands at the tag, byte for byte, with nothing left behind on this machine."""

from __future__ import annotations

import json
import tempfile
import uuid
from importlib import resources
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from typer.testing import CliRunner

from datalake import interchange
from datalake.lake import Lake
from datalake.storage import filesystem
from phoneloop.cli import app
from tests.hub_server import HubServer

SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))
RECIPE = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"
REPO = "phoneloop/from-s3"


@pytest.fixture
def hub():
    with HubServer() as server:
        yield server


@pytest.fixture(scope="module")
def curated(s3) -> str:
    """An S3 lake holding the sample and default@v1, built into the bucket."""
    lake = Lake.init(f"s3://lake/{uuid.uuid4().hex}", storage_options=s3.storage_options)
    assert interchange.import_jsonl(lake, SAMPLE).written > 0
    result = CliRunner().invoke(app, ["curate", str(RECIPE), "--lake", lake.uri], env=s3.env)
    assert result.exit_code == 0, result.output
    return lake.uri


def _bucket_files(s3, uri: str) -> dict[str, bytes]:
    """{relative path: bytes} of every object under the version's folder, read from the bucket."""
    lake = Lake.open(uri, storage_options=s3.storage_options)
    stored = json.loads(lake.sql("SELECT exports_json FROM datasets").to_pylist()[0]["exports_json"])["path"]
    fs, root = filesystem(f"{uri}/{stored}", s3.storage_options)
    out = {}
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        if info.is_file:
            with fs.open_input_stream(info.path) as f:
                out[info.path.removeprefix(root + "/")] = f.read()
    return out


def test_datasets_push_from_an_s3_lake_publishes_the_bucket_folder_at_the_tag(s3, curated, hub):
    env = {**s3.env, "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token}
    leftovers = set(Path(tempfile.gettempdir()).glob("phoneloop-push-*"))
    result = CliRunner().invoke(app, ["datasets", "push", "default@v1", "--repo", REPO, "--json",
                                      "--lake", curated], env=env)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output[result.output.index("{"):])
    assert out["tag"] == "default-v1"
    pushed = {path: f.data for path, f in hub.state.repos[("dataset", REPO)].files_at("default-v1").items()
              if path != ".gitattributes"}
    in_bucket = _bucket_files(s3, curated)
    assert pushed == in_bucket  # every file, byte for byte
    assert {"README.md", "recipe.yaml", "manifest.json"} <= pushed.keys()
    assert any(p.startswith("sft/") and p.endswith(".parquet") for p in pushed)
    assert set(Path(tempfile.gettempdir()).glob("phoneloop-push-*")) == leftovers  # the download was removed


def test_datasets_push_from_an_s3_lake_without_a_token_fails_in_one_line(s3, curated, hub, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    env = {**s3.env, "HF_ENDPOINT": hub.url}
    result = CliRunner().invoke(app, ["datasets", "push", "default@v1", "--repo", REPO, "--lake", curated], env=env)
    assert result.exit_code == 2
    assert "no Hugging Face token" in result.output and "Traceback" not in result.output
    assert ("dataset", REPO) not in hub.state.repos
