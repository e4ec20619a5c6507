"""The scheduling loop every backend shares (``rollout.runner._schedule``), driven by
in-process workers so a death can land at the one moment a real kill rarely hits: after
the worker took a job from the queue and before it said "started"."""

from __future__ import annotations

import queue
import threading

from rollout.runner import RolloutReport, _schedule
from rollout.spec import RolloutSpec


class ThreadBackend:
    """Workers are threads that speak the worker protocol (rollout.worker.work's messages)."""

    def __init__(self, behaviour):
        self.behaviour = behaviour  # phone -> "healthy" | "dies_after_take"
        self.threads: dict[str, threading.Thread] = {}
        self.died: set[str] = set()

    def queues(self):
        return queue.Queue(), queue.Queue()

    def start(self, phone, kind, args):
        jobs, results = args[-2], args[-1]
        if self.behaviour[phone] == "dies_after_take":
            jobs.get()  # took a job and vanished before saying "started" (and never says "done")
            self.died.add(phone)
            return phone
        thread = threading.Thread(target=self._healthy, args=(phone, jobs, results), daemon=True)
        thread.start()
        self.threads[phone] = thread
        return phone

    def _healthy(self, phone, jobs, results):
        while (job := jobs.get()) is not None:
            results.put({"kind": "started", "job": job, "phone": phone})
            results.put({"kind": "episode", "phone": phone, "outcome": "success", "invalid_steps": 0,
                         "retries": 0, "failure_reason": None, "job": job})
        results.put({"kind": "done", "phone": phone})

    def dead(self, handle) -> bool:
        return handle in self.died

    def join(self, handles):
        for phone in handles:
            if phone not in self.died:
                self.threads[phone].join(timeout=10)


def _run(behaviour, todo):
    spec = RolloutSpec(policy="oracle", tasks="app:clock", phones=f"mock:{len(behaviour)}")
    report = RolloutReport(rollout_id="sched-test")
    backend = ThreadBackend(behaviour)
    box: dict = {}
    runner = threading.Thread(target=lambda: box.update(
        out=_schedule(backend, "unused", "mock", list(behaviour), todo, spec, report, None, None)), daemon=True)
    runner.start()
    runner.join(timeout=60)
    assert not runner.is_alive(), "the scheduler hung waiting for a job nobody holds"
    return box["out"], report


def test_a_worker_that_dies_between_taking_a_job_and_announcing_it_does_not_hang_the_run():
    todo = [{"task": "t", "seed": s, "attempt": 1} for s in range(4)]
    (live, died), report = _run({"mock-0": "dies_after_take", "mock-1": "healthy"}, todo)
    assert died and live == ["mock-1"] and report.worker_deaths == 1
    assert report.episodes == 3  # the lost job is left to the lake check in _run_workers


def test_healthy_workers_run_every_job_once():
    todo = [{"task": "t", "seed": s, "attempt": 1} for s in range(5)]
    (live, died), report = _run({"mock-0": "healthy", "mock-1": "healthy"}, todo)
    assert not died and sorted(live) == ["mock-0", "mock-1"]
    assert report.episodes == 5 and report.errors == []
