"""`phoneloop train sft` on a dataset version stored in the bucket (moto on 127.0.0.1): the
export is downloaded once through the lake's credentials, trained on with the tiny model
for a couple of steps, and the model is registered in the S3 lake's registry."""

from __future__ import annotations

import json
import uuid
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datalake import interchange
from datalake.lake import Lake
from phoneloop.cli import app

SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))
RECIPE = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"


@pytest.fixture(scope="module")
def curated(s3, tmp_path_factory) -> tuple[str, dict]:
    """An S3 lake holding the sample and default@v1 (curated into the bucket); the env to reach it."""
    lake = Lake.init(f"s3://lake/{uuid.uuid4().hex}", storage_options=s3.storage_options)
    assert interchange.import_jsonl(lake, SAMPLE).written > 0
    env = {**s3.env, "PHONELOOP_CACHE": str(tmp_path_factory.mktemp("cache"))}
    result = CliRunner().invoke(app, ["curate", str(RECIPE), "--lake", lake.uri], env=env)
    assert result.exit_code == 0, result.output
    return lake.uri, env


def _invoke(env: dict, *args) -> object:
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def test_train_sft_reads_a_dataset_version_from_the_bucket_and_registers_the_model(s3, curated):
    uri, env = curated
    result = _invoke(env, "train", "sft", "--dataset", "default@v1", "--output", "s3-sft", "--max-steps", 2,
                     "--batch-size", 2, "--lake", uri)
    assert result.exit_code == 0, result.output
    listed = _invoke(env, "train", "models", "s3-sft", "--json", "--lake", uri)
    [row] = json.loads(listed.stdout)
    lake = Lake.open(uri, storage_options=s3.storage_options)
    fingerprint = lake.sql("SELECT fingerprint FROM datasets WHERE name = 'default'").to_pylist()[0]["fingerprint"]
    assert row["dataset"] == "default@v1" and row["dataset_fingerprint"] == fingerprint
    assert json.loads(row["metrics_json"])["steps"] == 2
    assert (Path(row["path"]) / "config.json").is_file()  # trained on this machine, under the cache
    assert Path(row["path"]).is_relative_to(env["PHONELOOP_CACHE"])
    [copy] = (Path(env["PHONELOOP_CACHE"]) / "datasets").glob(f"default-v1-{fingerprint[:16]}")
    assert (copy / "README.md").is_file() and list(copy.glob("sft/*.parquet"))
    assert not list(copy.parent.glob(".download-*"))  # no half download left behind


def test_a_second_run_reads_the_cached_copy_and_a_missing_version_is_named(s3, curated, monkeypatch):
    uri, env = curated
    from training.data import open_export

    monkeypatch.setenv("PHONELOOP_CACHE", env["PHONELOOP_CACHE"])
    lake = Lake.open(uri, storage_options=s3.storage_options)
    first = open_export(lake, "default@v1", "sft")
    second = open_export(lake, "default@v1", "sft")
    assert first.path == second.path and first.path.startswith(env["PHONELOOP_CACHE"])
    assert len(first.load()) == first.rows > 0  # the local copy loads with `datasets`, all rows
    missing = _invoke(env, "train", "sft", "--dataset", "default@v9", "--output", "x", "--lake", uri)
    assert missing.exit_code == 2 and "no dataset 'default@v9'" in missing.output


def test_a_version_whose_files_left_the_bucket_fails_before_training_naming_it(s3, curated, tmp_path,
                                                                               monkeypatch):
    uri, env = curated
    from datalake.storage import filesystem
    from training.data import open_export
    from training.errors import TrainingError

    monkeypatch.setenv("PHONELOOP_CACHE", str(tmp_path))  # nothing cached yet
    lake = Lake.open(uri, storage_options=s3.storage_options)
    exports = json.loads(lake.sql("SELECT exports_json FROM datasets").to_pylist()[0]["exports_json"])
    fs, root = filesystem(exports["path"], s3.storage_options)
    with fs.open_input_stream(f"{root}/README.md") as f:
        card = f.read()
    fs.delete_file(f"{root}/README.md")
    try:
        with pytest.raises(TrainingError, match=r"default@v1: cannot download s3://"):
            open_export(lake, "default@v1", "sft")
    finally:
        with fs.open_output_stream(f"{root}/README.md") as f:
            f.write(card)
    assert not list((tmp_path / "datasets").glob("*"))  # nothing half-downloaded was kept
