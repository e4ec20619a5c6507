import os
import signal

from datalake.lake import Lake, spawn_context
from tests.datalake import workers


def count(lake, table):
    return lake.sql(f"SELECT count(*) FROM {table}").column(0)[0].as_py()


def test_four_processes_appending_concurrently_lose_nothing(lake):
    ctx = spawn_context()
    with ctx.Pool(4) as pool:
        results = pool.starmap(workers.append_batches, [(lake.uri, w, 5, 3) for w in range(4)])
    assert results == [15, 15, 15, 15]
    fresh = Lake.open(lake.uri)
    assert count(fresh, "episodes") == 60
    assert count(fresh, "steps") == 180
    assert fresh.sql("SELECT count(DISTINCT instruction) FROM episodes").column(0)[0].as_py() == 60
    assert count(fresh, "frames") == fresh.sql("SELECT count(DISTINCT frame_sha) FROM steps").column(0)[0].as_py()


def test_writer_killed_mid_batch_leaves_no_partial_episode(lake):
    ctx = spawn_context()
    ready = ctx.Event()
    child = ctx.Process(target=workers.write_then_hang, args=(lake.uri, ready))
    child.start()
    try:
        assert ready.wait(120), "child never reached the steps commit"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.join()
    assert child.exitcode == -signal.SIGKILL
    fresh = Lake.open(lake.uri)
    assert count(fresh, "episodes") == 2
    assert count(fresh, "steps") == 6
    assert count(fresh, "steps_raw") == 12  # the dead batch's steps exist but are not visible
    visible = fresh.sql("SELECT e.episode_id, e.num_steps, count(s.step_index) AS n FROM episodes e "
                        "LEFT JOIN steps s USING (episode_id) GROUP BY ALL").to_pylist()
    assert all(row["num_steps"] == row["n"] for row in visible)
    # the lake stays writable and a retry of the dead batch lands whole
    from tests.factory import episode
    report = fresh.write_episodes([episode(3), episode(4)])
    assert report.written == 2 and count(fresh, "steps") == 12
