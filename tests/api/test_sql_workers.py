"""SQL worker processes are reused from query to query, and never after a memory failure or a timeout."""

import pytest

from api import sql as user_sql
from api.errors import SqlFailed, SqlTimeout
from datalake.lake import Lake
from tests.factory import episode

LIMITS = user_sql.SqlLimits()


@pytest.fixture
def pool():
    pool = user_sql.WorkerPool(warm=0, keep=2)  # nothing started ahead: every start is a query's
    yield pool
    pool.close()


def idle_pids(pool):
    return [c.pid for c in pool._idle]


def test_a_second_query_runs_in_the_same_worker_and_sees_new_commits(tmp_path, pool):
    lake = Lake.init(tmp_path / "lake")
    count = "SELECT count(*) AS n FROM episodes"
    assert user_sql.run_bounded(lake.uri, None, count, LIMITS, pool).rows == [[0]]
    (pid,) = idle_pids(pool)
    lake.write_episodes([episode(seed=3)])
    assert user_sql.run_bounded(lake.uri, None, count, LIMITS, pool).rows == [[1]]
    assert idle_pids(pool) == [pid] and pool.started == 1


def test_a_failed_statement_keeps_the_worker_and_its_error(shared_lake, pool):
    with pytest.raises(SqlFailed, match="no_such_table"):
        user_sql.run_bounded(shared_lake.uri, None, "SELECT * FROM no_such_table", LIMITS, pool)
    (pid,) = idle_pids(pool)
    assert user_sql.run_bounded(shared_lake.uri, None, "SELECT 1 AS one", LIMITS, pool).rows == [[1]]
    assert idle_pids(pool) == [pid]


def test_a_worker_past_its_memory_cap_is_not_reused(shared_lake, pool):
    user_sql.run_bounded(shared_lake.uri, None, "SELECT 1", LIMITS, pool)
    (pid,) = idle_pids(pool)
    small = user_sql.SqlLimits(memory_mb=64, process_mb=400)
    with pytest.raises(SqlFailed, match="more memory"):
        user_sql.run_bounded(shared_lake.uri, None, "select string_agg(repeat('x', 1000), ',') from range(1000000)",
                             small, pool)
    assert idle_pids(pool) == []  # retired
    user_sql.run_bounded(shared_lake.uri, None, "SELECT 1", LIMITS, pool)
    assert idle_pids(pool) != [pid] and pool.started == 2


def test_a_timed_out_worker_is_killed_not_reused(shared_lake, pool):
    user_sql.run_bounded(shared_lake.uri, None, "SELECT 1", LIMITS, pool)
    (child,) = pool._idle
    with pytest.raises(SqlTimeout):
        user_sql.run_bounded(shared_lake.uri, None, "SELECT count(*) FROM range(1000000000) a, range(1000) b "
                             "WHERE a.range % 7 = b.range", user_sql.SqlLimits(timeout_s=0.3), pool)
    assert child.poll() is not None and idle_pids(pool) == []
