"""The local backend's spawned workers and queues, with real processes and real SIGKILLs."""

from __future__ import annotations

import os
import signal
import threading

from fleet.backends import LocalBackend
from fleet.pool import Pool

TARGET = "tests.rollout.pool_workers:chatty"


def _run_killing(victim: str, after: int, jobs: list[int]) -> dict:
    """One pass of ``jobs`` over phones a and b; ``victim`` is SIGKILLed after ``after`` of its messages."""
    backend = LocalBackend(TARGET)
    pool = Pool(backend, "mock", ["a", "b"], jobs, ())
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
        seen["deaths"].append((phone, job))  # the Pool itself puts the job back on the queue

    box: dict = {}
    runner = threading.Thread(target=lambda: box.update(lost=pool.run(handle, on_death=on_death)), daemon=True)
    runner.start()
    runner.join(timeout=120)
    assert not runner.is_alive(), "the pool hung after a worker was killed mid-message"
    return {**seen, "lost": box["lost"]}


def test_a_worker_killed_while_sending_leaves_its_sibling_able_to_finish():
    """Killed in the middle of a stream of messages (its queue writes in flight): the pass ends, the sibling
    finishes its jobs, the victim's announced job is done again in the same pass, and no job ends twice.
    (With ``multiprocessing.Queue`` the sibling's writes waited forever on the pipe lock the victim died
    holding.) A job the victim had taken but not yet announced is invisible to the parent (the Pool's
    documented limit): the pass stops without it and the callers rerun what the lake lacks, as done here
    with a second pass over the jobs that never ended. Run in CI, the kill after 150 messages once landed
    in exactly that window."""
    everything = list(range(12))
    for after in (3, 57, 150):
        out = _run_killing("a", after, everything)
        assert [phone for phone, _ in out["deaths"]] == ["a"]
        assert out["lost"] == 0 and len(out["ended"]) == len(set(out["ended"])), out
        unseen = sorted(set(everything) - set(out["ended"]))
        assert len(unseen) <= 1, out  # at most the one job taken between "ended" and "started"
        if unseen:
            again = _run_killing("nobody", 0, unseen)
            assert again["deaths"] == [] and again["ended"] == unseen, again
