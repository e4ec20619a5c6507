"""The lake on object storage: an S3-compatible server (moto) on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from typer.testing import CliRunner

from datalake import migrate
from datalake.errors import LakeError
from datalake.lake import Lake, spawn_context
from phoneloop.cli import app
from tests.datalake.test_migrate import write_v1_lake
from tests.factory import episode
from tests.s3_server import S3Server


@pytest.fixture(scope="module")
def s3():
    with S3Server() as server:
        server.create_bucket("lake")
        yield server


@pytest.fixture
def s3_uri(s3):
    return f"s3://lake/{uuid.uuid4().hex}"


def test_lake_round_trip_frames_time_travel_and_compaction(s3, s3_uri):
    lake = Lake.init(s3_uri, storage_options=s3.storage_options)
    eps = [episode(i) for i in range(4)]
    assert lake.write_episodes(eps[:2]).written == 2
    assert lake.write_episodes(eps[2:]).written == 2
    lake = Lake.open(s3_uri, storage_options=s3.storage_options)
    assert lake.episode(eps[3].episode_id) == eps[3]
    assert lake.frame(eps[0].steps[0].observation.sha256) == eps[0].steps[0].observation.screenshot
    old = lake.as_of({"episodes": 1, "steps": 1, "frames": 1})
    assert old.sql("SELECT count(*) AS n FROM episodes").to_pylist() == [{"n": 2}]
    lake.compact()
    assert Lake.open(s3_uri, storage_options=s3.storage_options).info()["rows"]["steps"] == 12


def _append_worker(uri: str, options: dict, seeds: list[int]) -> int:
    lake = Lake.open(uri, storage_options=options)
    return sum(lake.write_episodes([episode(seed)]).written for seed in seeds)


def test_concurrent_appends_from_four_processes_lose_nothing(s3, s3_uri):
    Lake.init(s3_uri, storage_options=s3.storage_options)
    shares = [list(range(w * 5, w * 5 + 5)) for w in range(4)]
    with spawn_context().Pool(4) as pool:
        written = pool.starmap(_append_worker, [(s3_uri, s3.storage_options, share) for share in shares])
    assert sum(written) == 20
    lake = Lake.open(s3_uri, storage_options=s3.storage_options)
    ids = {r["episode_id"] for r in lake.sql("SELECT episode_id FROM episodes").to_pylist()}
    assert ids == {episode(seed).episode_id for share in shares for seed in share}
    assert lake.info()["versions"]["episodes"] == 20  # one commit per append, none lost


def test_v1_local_lake_copied_to_s3_opens_and_migrates(s3, tmp_path):
    eps = [episode(0), episode(1)]
    write_v1_lake(tmp_path / "v1", eps)
    prefix = uuid.uuid4().hex
    s3.upload_folder(tmp_path / "v1", "lake", prefix)
    uri = f"s3://lake/{prefix}"
    lake = Lake.open(uri, storage_options=s3.storage_options)
    assert lake.read_only and lake.episode(eps[1].episode_id) == eps[1]
    migrate.migrate(uri, storage_options=lake.storage_options)
    lake = Lake.open(uri, storage_options=s3.storage_options)
    assert not lake.read_only and lake.write_episodes([episode(5)]).written == 1


def test_cli_reads_credentials_from_the_standard_environment(s3, s3_uri):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **s3.env}
    cli = [sys.executable, "-m", "phoneloop.cli", "lake"]
    subprocess.run(cli + ["init", "--lake", s3_uri], env=env, check=True, capture_output=True)
    Lake.open(s3_uri, storage_options=s3.storage_options).write_episodes([episode(3)])
    out = subprocess.run(cli + ["info", "--json", "--lake", s3_uri], env=env, check=True, capture_output=True,
                         text=True).stdout
    assert json.loads(out)["rows"]["episodes"] == 1


def test_a_missing_bucket_and_wrong_credentials_give_clear_errors(s3):
    with pytest.raises(LakeError, match="nosuchbucket"):
        Lake.open("s3://nosuchbucket/lake", storage_options=s3.storage_options)
    bad = {**s3.storage_options, "AWS_SECRET_ACCESS_KEY": "wrong"}
    Lake.init(uri := f"s3://lake/{uuid.uuid4().hex}", storage_options=s3.storage_options)
    # moto accepts any signature by default, so "wrong credentials" is checked as an
    # unreachable endpoint: the message must name the lake, not be a stack of OSErrors
    unreachable = {**bad, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    with pytest.raises(LakeError, match=uri.split("/")[-1]):
        Lake.open(uri, storage_options=unreachable)
    result = CliRunner().invoke(app, ["lake", "info", "--lake", "s3://nosuchbucket/lake"],
                                env={**s3.env})
    assert result.exit_code != 0 and "nosuchbucket" in result.output and "Traceback" not in result.output
