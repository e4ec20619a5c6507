"""`phoneloop train sft` on a dataset version stored in the bucket (moto on 127.0.0.1): the
export is downloaded once through the lake's credentials, trained on with the tiny model
for a couple of steps, and the model is uploaded into the lake and registered with its
``s3://`` URI; a machine without the local copy (the cache deleted) downloads it from the
bucket, verified against its manifest, and rolls it out on mock phones."""

from __future__ import annotations

import dataclasses
import json
import shutil
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
    assert row["path"].startswith(f"{uri}/models/s3-sft/")  # uploaded into the lake, not a path on this machine
    stored = _stored_files(s3, row["path"])
    assert {"config.json", "model.safetensors", "phoneloop_manifest.json"} <= set(stored), sorted(stored)
    manifest = json.loads(s3.client().get_object(Bucket="lake", Key=_key(row["path"]) + "/phoneloop_manifest.json")
                          ["Body"].read())
    assert {f["path"]: f["size"] for f in manifest["files"]} == {k: v for k, v in stored.items()
                                                                 if k != "phoneloop_manifest.json"}
    [copy] = (Path(env["PHONELOOP_CACHE"]) / "datasets").glob(f"default-v1-{fingerprint[:16]}")
    assert (copy / "README.md").is_file() and list(copy.glob("sft/*.parquet"))
    assert not list(copy.parent.glob(".download-*"))  # no half download left behind


def _key(uri: str) -> str:
    return uri.removeprefix("s3://lake/")


def _stored_files(s3, uri: str) -> dict[str, int]:
    """{relative path: size} of every object under ``uri``, listed by boto3."""
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket="lake", Prefix=_key(uri) + "/")
    return {o["Key"].removeprefix(_key(uri) + "/"): o["Size"] for page in pages for o in page.get("Contents", [])}


def _trained(s3, curated) -> tuple[str, dict, dict]:
    uri, env = curated
    lake = Lake.open(uri, storage_options=s3.storage_options)
    if not lake.sql("SELECT count(*) AS n FROM models WHERE name = 's3-sft'").to_pylist()[0]["n"]:
        result = _invoke(env, "train", "sft", "--dataset", "default@v1", "--output", "s3-sft", "--max-steps", 2,
                         "--batch-size", 2, "--lake", uri)
        assert result.exit_code == 0, result.output
        lake.invalidate()
    [row] = lake.sql("SELECT * FROM models WHERE name = 's3-sft'").to_pylist()
    assert row["path"].startswith("models/s3-sft/")  # stored relative to the lake root: the lake can move
    return uri, env, {**row, "path": f"{uri}/{row['path']}"}


def test_a_model_trained_on_an_s3_lake_rolls_out_on_a_machine_without_its_local_copy(s3, curated, tmp_path):
    uri, env, row = _trained(s3, curated)
    shutil.rmtree(env["PHONELOOP_CACHE"])  # another machine: no checkpoint, no cached dataset
    elsewhere = {**env, "PHONELOOP_CACHE": str(tmp_path / "cache")}
    result = _invoke(elsewhere, "rollout", "--policy", "s3-sft", "--tasks", "SettingsWifiOn", "--phones", "mock:1",
                     "--episodes", 2, "--max-steps", 2, "--max-tokens", 16, "--lake", uri, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    assert report["episodes"] == report["written"] == 2
    lake = Lake.open(uri, storage_options=s3.storage_options)
    rows = lake.sql("SELECT policy, (SELECT count(*) FROM steps s WHERE s.episode_id = e.episode_id) AS n "
                    "FROM episodes e WHERE json_extract_string(meta_json, '$.rollout_id') = ?",
                    [report["rollout_id"]]).to_pylist()
    assert len(rows) == 2 and all(r["policy"] == "s3-sft" and r["n"] > 0 for r in rows), rows
    [copy] = (tmp_path / "cache" / "registered").glob("s3-sft-*")  # downloaded once, for every loader
    stored = _stored_files(s3, row["path"])
    local = {p.relative_to(copy).as_posix(): p.stat().st_size for p in copy.rglob("*") if p.is_file()}
    assert local == stored  # every uploaded file, at its size, and the manifest
    assert not list(copy.parent.glob(".download-*"))


def test_a_model_whose_bucket_copy_changed_or_lost_its_manifest_is_refused_and_nothing_is_cached(
        s3, curated, tmp_path, monkeypatch):
    from training.errors import TrainingError
    from training.registry import resolve_model

    uri, env, row = _trained(s3, curated)
    monkeypatch.setenv("PHONELOOP_CACHE", str(tmp_path))
    lake = Lake.open(uri, storage_options=s3.storage_options)
    client, key = s3.client(), _key(row["path"]) + "/config.json"
    original = client.get_object(Bucket="lake", Key=key)["Body"].read()
    client.put_object(Bucket="lake", Key=key, Body=original.replace(b"}", b" }", 1))  # one byte more
    try:
        with pytest.raises(TrainingError, match=r"config.json is not the file that was uploaded"):
            resolve_model(lake, "s3-sft")
    finally:
        client.put_object(Bucket="lake", Key=key, Body=original)
    assert not list((tmp_path / "registered").iterdir())  # no half or wrong copy kept
    manifest_key = _key(row["path"]) + "/phoneloop_manifest.json"
    manifest = client.get_object(Bucket="lake", Key=manifest_key)["Body"].read()
    client.delete_object(Bucket="lake", Key=manifest_key)  # what an upload killed before its last file leaves
    try:
        with pytest.raises(TrainingError, match=r"has no readable phoneloop_manifest.json"):
            resolve_model(lake, "s3-sft")
    finally:
        client.put_object(Bucket="lake", Key=manifest_key, Body=manifest)
    assert Path(resolve_model(lake, "s3-sft").path, "config.json").read_bytes() == original


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
    from datalake.storage import filesystem, resolve_folder
    from training.data import open_export
    from training.errors import TrainingError

    monkeypatch.setenv("PHONELOOP_CACHE", str(tmp_path))  # nothing cached yet
    lake = Lake.open(uri, storage_options=s3.storage_options)
    exports = json.loads(lake.sql("SELECT exports_json FROM datasets").to_pylist()[0]["exports_json"])
    fs, root = filesystem(resolve_folder(uri, exports["path"]), s3.storage_options)  # stored relative to the lake
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


def test_training_continues_from_a_model_in_the_bucket_and_the_loop_checks_the_downloaded_copy(
        s3, curated, tmp_path):
    from phoneloop.loop import StageFailed, _check_loads
    from training.model_store import cache_folder
    from training.registry import get_model

    uri, env, row = _trained(s3, curated)
    elsewhere = {**env, "PHONELOOP_CACHE": str(tmp_path / "cache")}  # nothing of s3-sft cached here
    result = _invoke(elsewhere, "train", "sft", "--dataset", "default@v1", "--model", "s3-sft", "--output",
                     "s3-sft-2", "--max-steps", 1, "--batch-size", 2, "--lake", uri)
    assert result.exit_code == 0, result.output
    lake = Lake.open(uri, storage_options=s3.storage_options)
    child = get_model(lake, "s3-sft-2")
    assert child.parent == "s3-sft" and child.path.startswith(f"{uri}/models/s3-sft-2/")
    parent_copy = tmp_path / "cache" / "registered" / cache_folder("s3-sft", row["path"]).name
    assert (parent_copy / "phoneloop_manifest.json").is_file()
    assert child.config["resolved_model"] == str(parent_copy)  # trained from the copy downloaded from the bucket
    _check_loads(child, lake)  # the loop's check: loads what was uploaded (seeded copy: no download)
    broken = dataclasses.replace(child, path=f"{uri}/models/s3-sft-2/missing")
    with pytest.raises(StageFailed, match=r"s3-sft-2.*does not load.*phoneloop_manifest.json"):
        _check_loads(broken, lake)
