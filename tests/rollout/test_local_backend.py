"""The local backend's spawned workers and queues, with real processes and real SIGKILLs."""

from __future__ import annotations

import os
import signal
import threading

from rollout.backends import LocalBackend, Pool

TARGET = "tests.rollout.pool_workers:chatty"


def _run_killing(victim: str, after: int) -> dict:
    """One pass of 12 jobs over phones a and b; ``victim`` is SIGKILLed after ``after`` of its messages."""
    backend = LocalBackend(TARGET)
    pool = Pool(backend, "mock", ["a", "b"], list(range(12)), ())
    seen = {"ended": [], "deaths": [], "count": 0}

    def handle(message):
        if message["phone"] == victim and not seen["deaths"]:
            seen["count"] += 1
            if seen["count"] == after:
                os.kill(pool.workers[victim].pid, signal.SIGKILL)
        if message["kind"] == "ended":
            seen["ended"].append(message["job"])
            return 1
        return 0

    def on_death(phone, handle_, job):
        seen["deaths"].append((phone, job))
        if job is not None:
            pool.requeue(job)

    box: dict = {}
    runner = threading.Thread(target=lambda: box.update(lost=pool.run(handle, on_death=on_death)), daemon=True)
    runner.start()
    runner.join(timeout=120)
    assert not runner.is_alive(), "the pool hung after a worker was killed mid-message"
    return {**seen, "lost": box["lost"]}


def test_a_worker_killed_while_sending_leaves_its_sibling_able_to_finish():
    """Killed in the middle of a stream of messages (its queue writes in flight): the sibling finishes every
    job, the victim's job in flight is done again, and the pass ends. (With ``multiprocessing.Queue`` the
    sibling's writes waited forever on the pipe lock the victim died holding.)"""
    for after in (3, 57, 150):
        out = _run_killing("a", after)
        assert [phone for phone, _ in out["deaths"]] == ["a"]
        assert out["lost"] == 0 and sorted(set(out["ended"])) == list(range(12)), out
