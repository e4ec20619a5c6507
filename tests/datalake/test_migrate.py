"""Schema migrations: a lake written with schema v1 upgrades to the current schema.

The v1 lake is written the way phoneloop 0.1 (schema v1) wrote it: Delta tables with
the v1 schemas (``migrate.tables_at(1)``), the writer's row format without the v2
columns, and a v1 marker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

from datalake import migrate
from datalake import schema as S
from datalake.errors import LakeNeedsMigration, UnsupportedSchemaVersion
from datalake.lake import Lake
from datalake.writer import EpisodeWriter
from phoneloop.cli import app
from tests.factory import episode


def write_v1_lake(path, episodes, annotations=()):
    v1 = migrate.tables_at(1)
    assert "evals" not in v1 and "purpose" not in v1["episodes"].names
    for name, schema in v1.items():
        DeltaTable.create(f"{path}/tables/{name}", schema, name=name)
    created = S.now()
    batch = "0" * 32
    eps = EpisodeWriter._episode_rows(list(episodes), batch, created).select(v1["episodes"].names)
    steps = EpisodeWriter._step_rows(list(episodes), batch).select(v1["steps"].names)
    frames = {s.observation.sha256: s.observation for ep in episodes for s in ep.steps}
    frame_rows = pa.Table.from_pylist([
        {"sha256": sha, "png": obs.screenshot, "width": obs.size[0], "height": obs.size[1],
         "nbytes": len(obs.screenshot), "created_at": created} for sha, obs in frames.items()], schema=v1["frames"])
    write_deltalake(f"{path}/tables/frames", frame_rows, mode="append")
    write_deltalake(f"{path}/tables/steps", steps.cast(v1["steps"]), mode="append")
    write_deltalake(f"{path}/tables/episodes", eps.cast(v1["episodes"]), mode="append")
    if annotations:
        write_deltalake(f"{path}/tables/annotations", pa.Table.from_pylist(list(annotations), schema=v1["annotations"]),
                        mode="append")
    S.write_marker(str(path), 1)


def verdict(ep, outcome, who="ann@example.com"):
    key = hashlib.sha256(f"{ep.episode_id}{outcome}{who}".encode()).hexdigest()[:16]
    return {"annotation_id": key, "target": "episode", "episode_id": ep.episode_id, "step_index": None,
            "status": "accepted", "action_json": None, "step_correct": None, "outcome": outcome, "note": None,
            "annotator": who, "origin": "label-studio:1/1/1", "created_at": S.now()}


@pytest.fixture
def v1_lake(tmp_path):
    eps = [episode(0), episode(1), episode(2, meta={"eval_id": "E1"})]
    write_v1_lake(tmp_path / "lake", eps, [verdict(eps[1], "failure")])
    return tmp_path / "lake", eps


def test_v1_lake_opens_read_only_and_reads_with_v2_columns(v1_lake):
    path, eps = v1_lake
    lake = Lake.open(str(path))
    assert lake.read_only and lake.schema_version == 1
    rows = {r["episode_id"]: r for r in lake.sql("SELECT * FROM episodes").to_pylist()}
    assert set(rows) == {e.episode_id for e in eps}
    assert rows[eps[2].episode_id]["purpose"] == "eval"  # derived from meta.eval_id
    assert rows[eps[0].episode_id]["purpose"] == "train" and rows[eps[0].episode_id]["failure_reason"] is None
    assert lake.sql("SELECT count(*) AS n FROM evals").to_pylist() == [{"n": 0}]
    assert lake.episode(eps[0].episode_id) == eps[0]
    with pytest.raises(LakeNeedsMigration, match="phoneloop lake migrate"):
        lake.write_episodes([episode(7)])
    with pytest.raises(LakeNeedsMigration):
        lake.append("annotations", [])


def test_migrate_upgrades_a_v1_lake_without_losing_or_rewriting_rows(v1_lake):
    path, eps = v1_lake
    before = {name: DeltaTable(f"{path}/tables/{name}").version() for name in migrate.tables_at(1)}
    report = migrate.migrate(str(path))
    assert (report.from_version, report.to_version) == (1, S.SCHEMA_VERSION)
    lake = Lake.open(str(path))
    assert not lake.read_only and lake.meta["schema_version"] == S.SCHEMA_VERSION
    for name, schema in S.TABLES.items():
        assert set(schema.names) <= {f.name for f in DeltaTable(f"{path}/tables/{name}").schema().fields}
    assert {e["episode_id"] for e in lake.sql("SELECT episode_id FROM episodes").to_pylist()} == \
        {e.episode_id for e in eps}
    for ep in eps:  # v1 eval episodes (meta.eval_id) read as purpose=eval
        expected = dataclasses.replace(ep, purpose="eval") if ep.meta.get("eval_id") else ep
        assert lake.episode(ep.episode_id) == expected
    # time travel to the pre-migration versions still reads the v1 data
    old = lake.as_of(before)
    assert old.sql("SELECT count(*) AS n FROM steps").to_pylist() == [{"n": sum(len(e.steps) for e in eps)}]
    # the human verdict written before the migration still counts
    resolved = {r["episode_id"]: r for r in lake.sql("SELECT * FROM episodes_resolved").to_pylist()}
    assert resolved[eps[1].episode_id]["outcome"] == "failure" and resolved[eps[1].episode_id]["human_rejected"]
    # and the lake takes v2 rows
    new = episode(8, purpose="eval", failure_reason="device_offline", score=0.25)
    new = dataclasses.replace(new, steps=tuple(dataclasses.replace(s, meta={"pairing": "uncertain", "tree_lag_ms": 40})
                                              for s in new.steps))
    assert lake.write_episodes([new]).written == 1
    assert lake.episode(new.episode_id) == new
    assert lake.sql("SELECT count(*) AS n FROM steps WHERE pairing = 'uncertain'").to_pylist() == [{"n": 3}]


def test_migrate_is_idempotent_and_finishes_an_interrupted_run(v1_lake):
    path, _ = v1_lake
    # an interrupted run: evals created and one table altered, marker still v1
    DeltaTable.create(f"{path}/tables/evals", S.EVALS, name="evals")
    fields = [f for f in S.EPISODES if f.name in migrate.ADDED[2]["episodes"]]
    from deltalake.schema import Field as DeltaField
    DeltaTable(f"{path}/tables/episodes").alter.add_columns([DeltaField.from_arrow(f) for f in fields])
    report = migrate.migrate(str(path))
    assert "evals: exists" in report.steps and "episodes: columns present" in report.steps
    assert any(step.startswith("steps: add") for step in report.steps)
    again = migrate.migrate(str(path))
    assert again.from_version == again.to_version == S.SCHEMA_VERSION and again.steps == []


def test_dry_run_changes_nothing(v1_lake):
    path, _ = v1_lake
    report = migrate.migrate(str(path), dry_run=True)
    assert report.steps and Lake.open(str(path)).schema_version == 1
    assert not DeltaTable.is_deltatable(f"{path}/tables/evals")


def test_cli_migrate_and_info(v1_lake):
    path, _ = v1_lake
    runner = CliRunner()
    info = runner.invoke(app, ["lake", "info", "--lake", str(path)])
    assert info.exit_code == 0 and "read-only" in info.output and "lake migrate" in info.output
    result = runner.invoke(app, ["lake", "migrate", "--lake", str(path), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["from"] == 1 and body["to"] == S.SCHEMA_VERSION
    again = runner.invoke(app, ["lake", "migrate", "--lake", str(path)])
    assert again.exit_code == 0 and "nothing to do" in again.output


def test_a_newer_lake_is_refused_by_migrate(tmp_path):
    lake = Lake.init(str(tmp_path / "lake"))
    S.write_marker(lake.uri, S.SCHEMA_VERSION + 1)
    with pytest.raises(UnsupportedSchemaVersion):
        migrate.migrate(lake.uri)


def write_v2_lake(path, episodes, evals=()):
    """A lake as phoneloop wrote it with schema v2 (before instance fingerprints, suites and task sets)."""
    v2 = migrate.tables_at(2)
    assert "tasksets" not in v2 and "instance" not in v2["episodes"].names and "suite" not in v2["evals"].names
    for name, schema in v2.items():
        DeltaTable.create(f"{path}/tables/{name}", schema, name=name)
    created, batch = S.now(), "1" * 32
    eps = EpisodeWriter._episode_rows(list(episodes), batch, created).select(v2["episodes"].names)
    steps = EpisodeWriter._step_rows(list(episodes), batch).select(v2["steps"].names)
    frames = {s.observation.sha256: s.observation for ep in episodes for s in ep.steps}
    write_deltalake(f"{path}/tables/frames", pa.Table.from_pylist([
        {"sha256": sha, "png": obs.screenshot, "width": obs.size[0], "height": obs.size[1],
         "nbytes": len(obs.screenshot), "created_at": created} for sha, obs in frames.items()], schema=v2["frames"]),
        mode="append")
    write_deltalake(f"{path}/tables/steps", steps.cast(v2["steps"]), mode="append")
    write_deltalake(f"{path}/tables/episodes", eps.cast(v2["episodes"]), mode="append")
    if evals:
        write_deltalake(f"{path}/tables/evals", pa.Table.from_pylist(list(evals), schema=v2["evals"]), mode="append")
    S.write_marker(str(path), 2)


def test_migrate_upgrades_a_v2_lake_to_instances_suites_and_task_sets(tmp_path):
    path = tmp_path / "lake"
    eps = [episode(0, meta={"instance": "a" * 32}), episode(1)]
    row = {"eval_id": "E2", "policy": "oracle", "status": "ok", "episodes": 2, "successes": 2, "created_at": S.now()}
    write_v2_lake(path, eps, [row])
    lake = Lake.open(str(path))
    assert lake.read_only and lake.schema_version == 2
    assert lake.sql("SELECT count(*) AS n FROM tasksets").to_pylist() == [{"n": 0}]
    report = migrate.migrate(str(path))
    assert (report.from_version, report.to_version) == (2, S.SCHEMA_VERSION)
    assert any(step.startswith("tasksets") for step in report.steps), report.steps
    lake = Lake.open(str(path))
    assert not lake.read_only
    got = {r["episode_id"]: r for r in lake.sql("SELECT episode_id, instance FROM episodes").to_pylist()}
    assert set(got) == {e.episode_id for e in eps} and all(r["instance"] is None for r in got.values())
    assert lake.sql("SELECT eval_id, suite, overlap FROM evals").to_pylist() == [
        {"eval_id": "E2", "suite": None, "overlap": None}]
    new = episode(9, meta={"instance": "b" * 32})
    assert lake.write_episodes([new]).written == 1
    assert lake.sql("SELECT instance FROM episodes WHERE episode_id = ?", [new.episode_id]).to_pylist() == [
        {"instance": "b" * 32}]
    assert lake.episode(eps[0].episode_id) == eps[0]


def test_migrate_upgrades_a_v3_lake_with_the_import_parts_table(tmp_path):
    """Schema v4 (issue 32): import_parts holds AitW step records of episodes cut by a shard boundary."""
    import shutil

    path = tmp_path / "lake"
    lake = Lake.init(str(path))
    ep = episode(0)
    lake.write_episodes([ep])
    shutil.rmtree(path / "tables" / "import_parts")
    S.write_marker(str(path), 3)
    old = Lake.open(str(path))
    assert old.read_only and old.sql("SELECT count(*) AS n FROM import_parts").to_pylist() == [{"n": 0}]
    report = migrate.migrate(str(path))
    assert (report.from_version, report.to_version) == (3, 4) and "import_parts: create table" in report.steps
    lake = Lake.open(str(path))
    assert not lake.read_only and lake.episode(ep.episode_id) == ep
    lake.append("import_parts", [{"dataset": "aitw", "episode_id": "aitw-x", "part": 0, "origin": "f",
                                  "locator": "record 0", "payload": b"raw", "created_at": S.now()}])
    assert lake.sql("SELECT part FROM import_parts").to_pylist() == [{"part": 0}]


def write_v3_lake(path, episodes, annotations=()):
    """A lake as phoneloop wrote it with schema v3 (before retractions, healed identities and the webhook inbox)."""
    v3 = migrate.tables_at(3)
    assert "webhook_inbox" not in v3 and "replaces" not in v3["annotations"].names
    for name, schema in v3.items():
        DeltaTable.create(f"{path}/tables/{name}", schema, name=name)
    created, batch = S.now(), "3" * 32
    eps = EpisodeWriter._episode_rows(list(episodes), batch, created).select(v3["episodes"].names)
    steps = EpisodeWriter._step_rows(list(episodes), batch).select(v3["steps"].names)
    frames = {s.observation.sha256: s.observation for ep in episodes for s in ep.steps}
    write_deltalake(f"{path}/tables/frames", pa.Table.from_pylist([
        {"sha256": sha, "png": obs.screenshot, "width": obs.size[0], "height": obs.size[1],
         "nbytes": len(obs.screenshot), "created_at": created} for sha, obs in frames.items()], schema=v3["frames"]),
        mode="append")
    write_deltalake(f"{path}/tables/steps", steps.cast(v3["steps"]), mode="append")
    write_deltalake(f"{path}/tables/episodes", eps.cast(v3["episodes"]), mode="append")
    if annotations:
        write_deltalake(f"{path}/tables/annotations", pa.Table.from_pylist(list(annotations), schema=v3["annotations"]),
                        mode="append")
    S.write_marker(str(path), 3)


def test_migrate_upgrades_a_v3_lake_to_retractions_and_the_webhook_inbox(tmp_path):
    path = tmp_path / "lake"
    eps = [episode(0), episode(1)]
    judged = verdict(eps[1], "failure")
    write_v3_lake(path, eps, [judged])
    lake = Lake.open(str(path))
    assert lake.read_only and lake.schema_version == 3
    assert lake.sql("SELECT count(*) AS n FROM webhook_inbox").to_pylist() == [{"n": 0}]
    assert lake.sql("SELECT human_rejected FROM episodes_resolved WHERE episode_id = ?",
                    [eps[1].episode_id]).to_pylist() == [{"human_rejected": True}]
    report = migrate.migrate(str(path))
    assert (report.from_version, report.to_version) == (3, S.SCHEMA_VERSION)
    assert "webhook_inbox: create table" in report.steps and "annotations: add replaces" in report.steps
    lake = Lake.open(str(path))
    assert not lake.read_only
    assert lake.sql("SELECT annotation_id, replaces FROM annotations").to_pylist() == [
        {"annotation_id": judged["annotation_id"], "replaces": None}]
    lake.append("annotations", [{**judged, "annotation_id": "retraction-1", "status": "retracted",
                                 "replaces": judged["annotation_id"], "created_at": S.now()}])
    assert lake.sql("SELECT human_rejected FROM episodes_resolved WHERE episode_id = ?",
                    [eps[1].episode_id]).to_pylist() == [{"human_rejected": False}]
    lake.append("webhook_inbox", [{"delivery_id": "d1", "kind": "received", "source": "label-studio",
                                   "payload": b"{}", "created_at": S.now()}])
    assert lake.sql("SELECT delivery_id, kind FROM webhook_inbox").to_pylist() == [{"delivery_id": "d1",
                                                                                    "kind": "received"}]
