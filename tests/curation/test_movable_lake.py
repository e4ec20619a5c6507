"""A lake moves (``mv``, a copy to object storage) with its datasets (issue 31)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from curation.build import curate, rebuild
from curation.recipe import load_recipe
from curation.versions import get_version, resolve_folder
from datalake.lake import Lake
from tests.curation.data import corpus

DEFAULT = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"


@pytest.fixture
def moved(tmp_path):
    """A lake with default@v1 built at ``before/lake``, then moved with ``mv`` to ``after/lake``."""
    lake = Lake.init(tmp_path / "before" / "lake")
    lake.write_episodes(list(corpus().values()))
    dv = curate(lake, load_recipe(DEFAULT))
    (tmp_path / "after").mkdir()
    shutil.move(str(tmp_path / "before" / "lake"), str(tmp_path / "after" / "lake"))
    return tmp_path / "after" / "lake", dv


def test_a_version_stores_its_folder_relative_to_the_lake(moved):
    root, dv = moved
    row = Lake.open(root).sql("SELECT exports_json FROM datasets").to_pylist()[0]
    stored = json.loads(row["exports_json"])["path"]
    assert stored == f"datasets/default/{Path(dv.path).name}"


def test_a_moved_lake_rebuilds_identical_and_finds_its_exports(moved):
    root, dv = moved
    lake = Lake.open(root)
    assert Path(get_version(lake, dv.ref).path) == root / "datasets" / "default" / Path(dv.path).name
    result = rebuild(lake, dv.ref)
    assert result["same"] and result["differing_files"] == []


def test_a_moved_lake_pushes_to_the_hub(moved, hub, monkeypatch):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    root, dv = moved
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    result = CliRunner().invoke(app, ["datasets", "push", dv.ref, "--repo", "phoneloop/moved", "--lake", str(root)])
    assert result.exit_code == 0, result.output


def test_a_lake_copied_to_object_storage_rebuilds_identical(moved):
    from tests.s3_server import S3Server

    root, dv = moved
    with S3Server() as s3:
        s3.create_bucket("lake")
        prefix = uuid.uuid4().hex
        s3.upload_folder(root, "lake", prefix)
        lake = Lake.open(f"s3://lake/{prefix}", storage_options=s3.storage_options)
        assert get_version(lake, dv.ref).path == f"s3://lake/{prefix}/datasets/default/{Path(dv.path).name}"
        result = rebuild(lake, dv.ref)
    assert result["same"] and result["differing_files"] == []


def test_a_moved_lake_finds_its_registered_models(tmp_path):
    from training.registry import ModelEntry, checkpoint_dir, get_model, register_model, resolve_model

    lake = Lake.init(tmp_path / "before" / "lake")
    folder = checkpoint_dir(lake, "sft-a") / "final"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "qwen3_vl"}')
    outside = tmp_path / "elsewhere" / "ckpt"
    outside.mkdir(parents=True)
    for name, path in (("sft-a", folder), ("sft-out", outside)):
        register_model(lake, ModelEntry(name=name, path=str(path), base_model="tiny", dataset=None,
                                        dataset_fingerprint=None, parent=None, config={}, metrics={}))
    rows = {r["name"]: r["path"] for r in lake.sql("SELECT name, path FROM models").to_pylist()}
    assert rows == {"sft-a": "models/sft-a/final", "sft-out": str(outside)}  # inside the lake: relative
    (tmp_path / "after").mkdir()
    shutil.move(str(tmp_path / "before" / "lake"), str(tmp_path / "after" / "lake"))
    moved = Lake.open(tmp_path / "after" / "lake")
    found = Path(resolve_model(moved, "sft-a").path)
    assert found == tmp_path / "after" / "lake" / "models" / "sft-a" / "final"
    assert json.loads((found / "config.json").read_text()) == {"model_type": "qwen3_vl"}
    assert get_model(moved, "sft-out").path == str(outside)  # a folder outside the lake stays where it is


@pytest.mark.parametrize("stored, root, expected", [
    ("/old/place/lake/datasets/d/v1-abc", "/new/lake", "/new/lake/datasets/d/v1-abc"),  # an older absolute path
    ("/new/lake/datasets/d/v1-abc", "/new/lake", "/new/lake/datasets/d/v1-abc"),
    ("datasets/d/v1-abc", "s3://b/p", "s3://b/p/datasets/d/v1-abc"),
    ("/elsewhere/v1-abc", "/new/lake", "/elsewhere/v1-abc"),  # not a lake folder: as stored
])
def test_stored_folders_resolve_against_the_present_lake_root(stored, root, expected):
    assert resolve_folder(root, stored) == expected


@pytest.mark.parametrize("stored, root, expected", [
    ("models/x/final", "/new/lake", "/new/lake/models/x/final"),
    ("models/x/0123abcd", "s3://b/p", "s3://b/p/models/x/0123abcd"),
    ("/old/place/lake/models/x/final", "/new/lake", "/new/lake/models/x/final"),  # an older absolute row
    ("s3://b/p/models/x/0123abcd", "s3://b/p", "s3://b/p/models/x/0123abcd"),
    ("org/model", "/new/lake", "org/model"),  # a Hub id
])
def test_stored_model_paths_resolve_against_the_present_lake_root(stored, root, expected):
    from training.registry import model_path

    assert model_path(root, stored) == expected
