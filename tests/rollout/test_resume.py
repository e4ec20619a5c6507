"""A standalone `phoneloop rollout` killed and rerun adds exactly the missing episodes (it used to
start a fresh run id each time: 3 kills and reruns gave 120 episodes for 40 jobs)."""

import os
import signal
import subprocess
import sys
import time

from typer.testing import CliRunner

from datalake.lake import Lake
from phoneloop.cli import app
from rollout.resume import RunChoice, choose_run
from tests.rollout.chat_server import ChatServer

TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'
JOBS = 12


def counts(lake: Lake) -> tuple[int, int, int]:
    """(episodes, distinct jobs, distinct run ids) of the rollouts in the lake."""
    try:
        row = Lake.open(lake.uri).sql(
            "SELECT count(*) AS n, count(DISTINCT task || '#' || json_extract_string(meta_json, '$.seed')) AS jobs, "
            "count(DISTINCT json_extract_string(meta_json, '$.run_id')) AS runs FROM episodes "
            "WHERE source = 'rollout'").to_pylist()[0]
    except Exception:  # no episodes table yet, or a commit under way: look again
        return 0, 0, 0
    return row["n"], row["jobs"], row["runs"]


def test_a_killed_rollout_rerun_adds_exactly_the_missing_episodes(lake):
    stuck = {"on": True}  # request 10 onwards hangs while on: the run is stopped mid-way, then killed
    with ChatServer(lambda body: TAP, faults=lambda n: "hang" if stuck["on"] and n >= 10 else None,
                    hang_seconds=120) as server:
        args = ["rollout", "--policy", server.url, "--tasks", "SettingsWifiOn", "--phones", "mock:1",
                "--episodes", str(JOBS), "--max-steps", "2", "--retries", "0", "--lake", lake.uri]
        proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        end = time.monotonic() + 240
        while counts(lake)[0] < 4:  # the worker's first commit (rollout.worker.WRITE_EVERY)
            assert proc.poll() is None, "the rollout ended before the kill point"
            assert time.monotonic() < end, "the first commit never came"
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at = counts(lake)
        assert 4 <= killed_at[0] < JOBS
        stuck["on"] = False
        (run_id,) = Lake.open(lake.uri).sql("SELECT DISTINCT json_extract_string(meta_json, '$.run_id') "
                                            "FROM episodes").column(0).to_pylist()
        key = run_id.removeprefix("cli-").removesuffix("/1")
        jobs = [("SettingsWifiOn", seed) for seed in range(JOBS)]
        assert choose_run(Lake.open(lake.uri), key, jobs) == RunChoice(run_id, True, killed_at[0], JOBS)
        assert choose_run(Lake.open(lake.uri), key, jobs, new_run=True).run_id == f"cli-{key}/2"  # --new-run

        rerun = CliRunner().invoke(app, args)
        assert rerun.exit_code == 0, rerun.output
        assert "resuming run cli-" in rerun.output and f"{killed_at[0]} of {JOBS} job(s)" in rerun.output
        assert counts(lake) == (JOBS, JOBS, 1)  # every job once, one run

        again = CliRunner().invoke(app, args)  # the run is complete: the same command is a new run
        assert again.exit_code == 0 and "resuming" not in again.output, again.output
        assert counts(lake) == (2 * JOBS, JOBS, 2)
        both = CliRunner().invoke(app, [*args, "--new-run", "--run-id", "x"])
        assert both.exit_code == 2 and "--new-run and --run-id" in both.output
