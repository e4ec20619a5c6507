"""The workers' lake writer: finished episodes are committed by a writer thread while the next
episode runs. Every finished episode reaches the lake in small commits, whether the run ends
normally, by a failing endpoint or by a job the worker cannot run; a lake that refuses
commits fails the rollout (and the CLI) loudly, never quietly."""

import json
import queue
import shutil
from dataclasses import asdict

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

from datalake.lake import Lake
from phoneloop.cli import app
from rollout.errors import LakeWriteFailed
from rollout.policies import PolicyOptions
from rollout.runner import rollout
from rollout.spec import RolloutSpec, jobs_for
from rollout.worker import WRITE_EVERY, work
from tests.rollout.chat_server import ChatServer

TASKS = "SettingsWifiOn,ClockAddAlarm"
TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'


def stored(lake: Lake) -> list[dict]:
    """The episodes table as committed (read straight from Delta, not through the views)."""
    table = DeltaTable(lake.table_uri("episodes")).to_pyarrow_table(columns=["episode_id", "failure_reason",
                                                                             "num_steps", "meta_json"])
    return table.to_pylist()


def commit_sizes(lake: Lake) -> list[int]:
    return pa.table(DeltaTable(lake.table_uri("episodes")).get_add_actions(flatten=True)).column(
        "num_records").to_pylist()


def break_steps_table(lake: Lake) -> None:
    """Someone replaced the steps table with one of another schema: deltalake refuses every append."""
    write_deltalake(lake.table_uri("steps"), pa.table({"x": [1]}), mode="overwrite", schema_mode="overwrite")


@pytest.mark.parametrize("phones", ["mock:1", "mock:2"])  # a worker thread in this process; spawned workers
def test_every_finished_episode_reaches_the_lake_in_small_commits(lake, phones):
    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones=phones, episodes=5)
    report = rollout(lake.uri, spec)
    rows = stored(lake)
    assert (report.episodes, report.written, report.errors, report.unwritten) == (10, 10, [], 0)
    assert len({r["episode_id"] for r in rows}) == len(rows) == 10
    sizes = commit_sizes(lake)
    assert sum(sizes) == 10 and max(sizes) <= WRITE_EVERY  # a kill loses little: batches stay small


def test_episodes_ended_by_a_failing_endpoint_are_all_committed(lake):
    """Every third request fails for good (no retries): each episode ends as policy_error after
    two steps, and each is written with its steps."""
    options = PolicyOptions(timeout=2, retries=0)
    with ChatServer(lambda body: TAP, faults=lambda n: "500" if n % 3 == 2 else None) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks=TASKS, phones="mock:1", episodes=3,
                                               max_steps=5, options=options))
    rows = stored(lake)
    assert (report.episodes, report.policy_errors, report.written, report.errors) == (6, 6, 6, [])
    assert [(r["failure_reason"], r["num_steps"]) for r in rows] == [("policy_error", 2)] * 6
    assert all("HTTP 500" in json.loads(r["meta_json"])["policy_error"] for r in rows)


def test_a_job_the_worker_cannot_run_still_commits_what_it_finished(lake):
    """The worker's loop ends with an exception (a job naming no task) while finished episodes
    wait for their commit: they are committed before the worker says done, and the error is
    reported, not swallowed."""
    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:1", episodes=3)
    jobs, results = queue.Queue(), queue.Queue()
    good = [{"task": t, "seed": s, "attempt": 1} for t, s in jobs_for(spec)][:WRITE_EVERY + 1]
    for job in [*good, {"task": "NoSuchTask", "seed": 0, "attempt": 1}, *good[:1], None]:
        jobs.put(job)
    work("mock-0", lake.uri, "mock", asdict(spec), "r1", None, jobs, results, in_process=True)
    messages = [results.get(timeout=5) for _ in range(results.qsize())]
    assert messages[-1]["kind"] == "done"
    errors = [m["error"] for m in messages if m["kind"] == "error"]
    assert len(errors) == 1 and "NoSuchTask" in errors[0]
    assert sum(m["written"] for m in messages if m["kind"] == "written") == len(good)
    assert len(stored(lake)) == len(good)
    assert jobs.get(timeout=5) == good[0]  # the worker stopped at the failure: the job after it is still queued


@pytest.mark.parametrize("phones", ["mock:1", "mock:2"])
def test_a_lake_that_refuses_commits_fails_the_rollout_loudly(lake, phones):
    break_steps_table(lake)
    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones=phones, episodes=6)
    with pytest.raises(LakeWriteFailed, match="SchemaMismatchError") as failed:
        rollout(lake.uri, spec)
    report = failed.value.report
    assert report.written == 0 and report.unwritten == report.episodes >= 1
    assert f"{report.unwritten} finished episode(s) could not be written" in str(failed.value)
    assert stored(lake) == []
    if phones == "mock:1":  # the worker stops at its first failed commit instead of running every job
        assert report.episodes <= 2 * WRITE_EVERY + 1 < len(jobs_for(spec))


def test_a_lake_that_starts_refusing_commits_mid_run_keeps_what_it_committed(lake):
    """The table breaks after the first commit: the episodes committed before stay, the run
    fails naming the cause, and the report's counts add up to what the lake holds."""
    broken = []

    def progress(report):
        if report.written and not broken:
            break_steps_table(lake)
            broken.append(report.written)

    spec = RolloutSpec(policy="oracle", tasks=TASKS, phones="mock:1", episodes=6)
    # deltalake names the change it saw: a new schema, or metadata changed since the writer's last commit
    with pytest.raises(LakeWriteFailed, match="lake write failed: (SchemaMismatchError|CommitFailedError)") as failed:
        rollout(lake.uri, spec, progress=progress)
    report = failed.value.report
    assert broken and report.written >= broken[0] and report.unwritten >= 1
    assert report.written + report.unwritten == report.episodes
    assert len(stored(lake)) == report.written


def test_the_rollout_command_exits_non_zero_when_the_lake_refuses_commits(lake):
    break_steps_table(lake)
    result = CliRunner().invoke(app, ["rollout", "--policy", "oracle", "--tasks", "SettingsWifiOn",
                                      "--phones", "mock:1", "--episodes", "2", "--lake", lake.uri])
    output = " ".join(result.output.split())  # rich wraps long lines
    assert result.exit_code != 0
    assert "could not be written to the lake" in output and "SchemaMismatchError" in output


def test_a_lake_folder_that_vanished_is_a_write_failure_not_a_success(lake):
    shutil.rmtree(lake.table_uri("steps"))
    open(lake.table_uri("steps"), "w").write("not a table")
    with pytest.raises(LakeWriteFailed, match="steps"):
        rollout(lake.uri, RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:1", episodes=2))
