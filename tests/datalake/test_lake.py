import json
import time
from datetime import datetime, timezone

import pytest

from datalake import schema as S
from datalake.errors import EpisodeNotFound, FrameNotFound, LakeError, LakeNotFound, UnsupportedSchemaVersion
from datalake.lake import Lake
from tests.factory import episode, png


def count(lake, table):
    return lake.sql(f"SELECT count(*) AS n FROM {table}").column(0)[0].as_py()


def test_init_creates_every_table_and_records_the_schema_version(lake):
    assert lake.meta["schema_version"] == S.SCHEMA_VERSION
    assert set(lake.info()["rows"]) == {"episodes", "steps", "frames", "annotations", "datasets", "models",
                                        "quarantine", "evals", "tasksets", "import_parts", "webhook_inbox"}
    assert all(n == 0 for n in lake.info()["rows"].values())


def test_init_is_idempotent_and_keeps_data(lake):
    lake.write_episodes([episode(1)])
    again = Lake.init(lake.uri)
    assert count(again, "episodes") == 1


def test_opening_a_missing_lake_says_how_to_create_one(tmp_path):
    with pytest.raises(LakeNotFound, match="phoneloop lake init"):
        Lake.open(tmp_path / "nothing")


def test_opening_a_lake_of_a_newer_schema_is_refused(lake):
    marker = f"{lake.uri}/{S.MARKER}"
    body = json.load(open(marker))
    body["schema_version"] = S.SCHEMA_VERSION + 1
    json.dump(body, open(marker, "w"))
    with pytest.raises(UnsupportedSchemaVersion, match=f"schema v{S.SCHEMA_VERSION + 1}"):
        Lake.open(lake.uri)


def test_written_episode_reads_back_equal(lake):
    ep = episode(1, n_steps=4, category="single-app", task="settings.wifi", policy="p", round=2,
                 meta={"seed": 7})
    report = lake.write_episodes([ep])
    assert (report.written, report.steps, report.quarantined) == (1, 4, 0)
    assert lake.episode(ep.episode_id) == ep


def test_missing_episode_raises_episode_not_found(lake):
    with pytest.raises(EpisodeNotFound, match="no episode 'nope'"):
        lake.episode("nope")


def test_one_commit_per_table_per_batch(lake):
    before = lake.versions()
    lake.write_episodes([episode(i) for i in range(5)])
    after = lake.versions()
    for table in ("episodes", "steps", "frames"):
        assert after[table] == before[table] + 1
    assert after["quarantine"] == before["quarantine"]


def test_frames_are_stored_once_per_sha(lake):
    a = episode(1)
    b = episode(1, instruction="same screens, other task")
    lake.write_episodes([a, b])
    lake.write_episodes([episode(1, instruction="and again")])
    assert count(lake, "steps") == 9
    assert count(lake, "frames") == 3
    sha = a.steps[0].observation.sha256
    assert lake.frame(sha) == a.steps[0].observation.screenshot


def test_unknown_frame_raises_frame_not_found(lake):
    lake.write_episodes([episode(1)])
    with pytest.raises(FrameNotFound):
        lake.frame("0" * 64)


def test_rewriting_an_episode_id_is_skipped_not_duplicated(lake):
    ep = episode(1)
    lake.write_episodes([ep])
    report = lake.write_episodes([ep])
    assert (report.written, report.skipped) == (0, 1)
    assert count(lake, "episodes") == 1 and count(lake, "steps") == 3


def test_time_travel_by_table_versions_returns_the_older_view(lake):
    lake.write_episodes([episode(1)])
    versions = lake.versions()
    lake.write_episodes([episode(2), episode(3)])
    old = lake.as_of(versions)
    assert count(old, "episodes") == 1 and count(old, "steps") == 3
    assert count(lake, "episodes") == 3
    assert old.versions() == versions


def test_time_travel_by_timestamp_returns_the_older_view(lake):
    lake.write_episodes([episode(1)])
    time.sleep(0.05)
    moment = datetime.now(timezone.utc)
    time.sleep(0.05)
    lake.write_episodes([episode(2)])
    assert count(lake.as_of(moment), "episodes") == 1
    assert count(lake.as_of(moment.isoformat()), "steps") == 3


def test_a_snapshot_is_read_only(lake):
    lake.write_episodes([episode(1)])
    with pytest.raises(LakeError, match="read-only"):
        lake.as_of(lake.versions()).write_episodes([episode(2)])


def test_compaction_merges_files_and_keeps_every_row(lake):
    for i in range(4):
        lake.write_episodes([episode(i)])
    files_before = len(lake.tables["steps"].file_uris())
    report = lake.compact()
    assert files_before == 4 and report["steps"]["files_removed"] == 4
    assert len(lake.tables["steps"].file_uris()) == 1
    assert count(lake, "episodes") == 4 and count(lake, "steps") == 12
    ep = episode(2)
    assert lake.episode(ep.episode_id) == ep


def test_orphan_steps_without_their_episode_row_are_invisible(lake):
    """What a writer killed between its steps and episodes commits leaves behind."""
    from deltalake import write_deltalake

    ep = episode(1)
    writer = lake.writer()
    steps = writer._step_rows([ep], batch_id="dead-writer")
    write_deltalake(lake.table_uri("steps"), steps, mode="append")
    lake.invalidate()
    assert count(lake, "steps_raw") == 3
    assert count(lake, "steps") == 0 and count(lake, "steps_resolved") == 0


def _annotation(ep, step_index, status, action, created_at, annotation_id):
    return {"annotation_id": annotation_id, "target": "step", "episode_id": ep.episode_id,
            "step_index": step_index, "status": status, "action_json": json.dumps(action),
            "step_correct": False, "outcome": None, "note": None, "annotator": "ann", "origin": "test",
            "created_at": created_at}


def test_steps_resolved_applies_the_latest_accepted_correction(lake):
    ep = episode(1)
    lake.write_episodes([ep])
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    t1 = datetime(2026, 1, 2, tzinfo=timezone.utc)
    lake.append("annotations", [
        _annotation(ep, 0, "accepted", {"type": "tap", "x": 5, "y": 6}, t0, "a1"),
        _annotation(ep, 0, "accepted", {"type": "long_press", "x": 7, "y": 8}, t1, "a2"),
        _annotation(ep, 1, "rejected", {"type": "key", "key": "back"}, t1, "a3"),
    ])
    rows = lake.sql("SELECT step_index, action_type, x, y, corrected, annotation_id "
                    "FROM steps_resolved ORDER BY step_index").to_pylist()
    assert rows[0] == {"step_index": 0, "action_type": "long_press", "x": 7.0, "y": 8.0, "corrected": True,
                       "annotation_id": "a2"}
    assert rows[1]["action_type"] == "tap" and rows[1]["corrected"] is False
    assert count(lake, "steps") == 3  # raw steps are never modified


def test_side_tables_cannot_bypass_the_episode_writer(lake):
    with pytest.raises(LakeError, match="write_episodes"):
        lake.append("steps", [])


def test_writer_quarantines_a_corrupt_png_and_writes_the_rest(lake):
    from tests.factory import corrupt_png
    from datalake.types import Observation, Step

    bad = episode(2)
    bad = type(bad)(**{**bad.__dict__, "steps": (Step(Observation(corrupt_png(9)), bad.steps[0].action),)})
    report = lake.write_episodes([episode(1), bad])
    assert (report.written, report.quarantined) == (1, 1)
    row = lake.sql("SELECT reason, episode_id, payload FROM quarantine").to_pylist()[0]
    assert "CRC mismatch" in row["reason"] and row["episode_id"] == bad.episode_id
    assert json.loads(row["payload"])["instruction"] == bad.instruction


def test_png_bytes_are_stored_unchanged(lake):
    ep = episode(5)
    lake.write_episodes([ep])
    for step in ep.steps:
        assert lake.frame(step.observation.sha256) == step.observation.screenshot
    assert png(500) == ep.steps[0].observation.screenshot


def test_orphan_steps_stay_invisible_after_compaction_mixes_batches(lake):
    from deltalake import write_deltalake

    lake.write_episodes([episode(1)])
    orphan = lake.writer()._step_rows([episode(2)], batch_id="f" * 32)
    write_deltalake(lake.table_uri("steps"), orphan, mode="append")
    lake.write_episodes([episode(3)])
    lake.compact()
    assert len(lake.tables["steps"].file_uris()) == 1  # one file now holds three batches
    assert count(lake, "steps_raw") == 9
    assert count(lake, "steps") == 6
    assert lake.sql("SELECT count(*) FROM steps WHERE batch_id = ?", ["f" * 32]).column(0)[0].as_py() == 0


def test_duplicate_episode_ids_from_racing_writers_show_once(lake):
    ep = episode(1)
    lake.write_episodes([ep])
    w = Lake.open(lake.uri).writer()
    w._known_ids = set()  # as if it had loaded the ids before the other writer's commit
    w.write([ep])
    fresh = Lake.open(lake.uri)
    assert count(fresh, "episodes_raw") == 2
    assert count(fresh, "episodes") == 1 and count(fresh, "steps") == 3


@pytest.mark.parametrize("statement", [
    "COPY episodes TO '/tmp/phoneloop-leak.csv'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "ATTACH '/tmp/phoneloop-other.db'",
    "INSTALL httpfs",
    "SET enable_external_access = true",
])
def test_readonly_connection_cannot_touch_files(lake, statement):
    import duckdb

    lake.write_episodes([episode(1)])
    con = lake.readonly_connection()
    assert con.execute("SELECT count(*) FROM steps").fetchone()[0] == 3
    with pytest.raises(duckdb.Error):
        con.execute(statement)
