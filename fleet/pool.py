"""The one scheduling loop every command that drives phones shares: ``Pool``.

The scheduling itself — the next job goes to whichever worker asks, a dead worker's job
in flight goes back to the queue, when the pass is over — is ``Pool.run``; what a message
means (an episode, a drop-out to retry) is the caller's ``handle``. A job is leased to the
worker that said ``started`` for it until a message ends it or the worker dies (then it
goes back to the queue).

The worker protocol, on the results queue (every message has ``kind`` and ``phone``):
``started`` {job} when a worker took a job; ``done`` when it stopped (a worker that says
``done`` while it holds a job crashed: the job goes back to the queue); any other message
is the caller's, and ``handle`` says how many jobs it ended. A ``None`` job is the stop
signal.
"""

from __future__ import annotations

import queue as queue_module
from typing import Any, Callable

from fleet.backends import QUEUE_LOST
from fleet.errors import QueuesLost

POLL_SECONDS = 0.5


class Pool:
    """One pass of jobs over one worker per phone: the scheduling every phone command shares.

        pool = Pool(backend, kind, phones, todo, args)      # starts min(phones, jobs) workers
                                                            # (every_phone=True: one per phone)
        pool.run(handle, on_death=...)                      # until every job ended or no worker is left

    ``handle(message)`` gets each of the caller's messages and returns how many jobs it
    ended (0 or 1); it may ``requeue(job)`` (a drop-out retried on another phone) and
    ``retire(phone)`` (that phone takes no more jobs in a later pass). A worker that dies
    without saying ``done`` (a killed process, a lost Ray node) is reported to
    ``on_death(phone, handle, job)`` and the job it held goes back to the queue. A job a
    dead worker had taken but not yet announced cannot be seen: when only such jobs can
    be left, the pass stops, and the caller reruns whatever the lake does not hold. When the
    queues themselves are lost (LocalBackend's manager process died), ``run`` waits for the
    workers to stop and raises QueuesLost; the caller may rerun on a fresh Pool.
    """

    def __init__(self, backend, kind: str, phones: list, todo: list, args: tuple, *,
                 every_phone: bool = False) -> None:
        self.backend = backend
        self.jobs, self.results = backend.queues()
        self.manager_pid = getattr(backend, "manager_pid", None)
        for job in todo:
            self.jobs.put(job)
        chosen = phones if every_phone else phones[:len(todo)]  # a farm's phone may leave before its first job
        self.workers = {phone: backend.start(phone, kind, (*args, self.jobs, self.results)) for phone in chosen}
        self.in_flight: dict[Any, Any] = dict.fromkeys(self.workers)
        self.finished: set = set()
        self.usable = set(self.workers)
        self.pending = len(todo)  # jobs not yet ended; -1 once the stop signals are out
        self.deaths = 0

    def requeue(self, job) -> None:
        self.jobs.put(job)

    def retire(self, phone) -> None:
        self.usable.discard(phone)

    def run(self, handle: Callable[[dict], int], *, on_death: Callable | None = None,
            progress: Callable[[], None] | None = None) -> int:
        """Schedule until done; returns the jobs that never ended (no phone left to run them).
        Raises QueuesLost, once every worker stopped, when the queues' manager process died."""
        try:
            while len(self.finished) < len(self.workers):
                if self.pending == 0:
                    for _ in self.workers:
                        self.jobs.put(None)  # no more jobs: every worker flushes and stops
                    self.pending = -1
                try:
                    message = self.results.get(timeout=POLL_SECONDS)
                except queue_module.Empty:
                    self._reap(on_death)
                    if self.pending > 0 and len(self.finished) == len(self.workers):
                        break
                    if self.pending > 0 and self._only_lost_jobs_left():
                        self.pending = 0  # stop the live workers; the caller reruns the lost job
                    continue
                self._receive(message, handle)
                if progress is not None:
                    progress()
        except QUEUE_LOST as exc:
            self.backend.join(list(self.workers.values()))  # they lose their queues too: they write and stop
            pid = f" (pid {self.manager_pid})" if self.manager_pid else ""
            raise QueuesLost(f"the queue manager{pid} died ({type(exc).__name__}: {exc})") from None
        self.backend.join(list(self.workers.values()))
        return max(self.pending, 0)

    def _receive(self, message: dict, handle: Callable[[dict], int]) -> None:
        kind, phone = message["kind"], message.get("phone")
        if kind == "started":
            self.in_flight[phone] = message["job"]
            return
        if kind == "done":
            self.finished.add(phone)
            job = self.in_flight.get(phone)
            if job is not None:  # it stopped (crashed) holding a job: like a death, the job goes back
                self.in_flight[phone] = None
                self.usable.discard(phone)
                self.deaths += 1
                if self.pending > 0:
                    self.jobs.put(job)
            return
        ended = handle(message)
        if phone is not None and (ended or message.get("job") is not None):
            self.in_flight[phone] = None  # its job ended (or went back to the queue): it is between jobs
        if self.pending > 0:
            self.pending -= ended

    def _reap(self, on_death: Callable | None) -> None:
        """Notice workers that died without saying so; their job in flight goes back to the queue."""
        for phone, handle in self.workers.items():
            if phone in self.finished or not self.backend.dead(handle):
                continue
            self.finished.add(phone)
            self.usable.discard(phone)
            self.deaths += 1
            job = self.in_flight.get(phone)
            if on_death is not None:
                on_death(phone, handle, job)
            if job is not None and self.pending > 0:
                self.jobs.put(job)  # nothing of it was recorded by this worker: another phone runs it
            # after the stop signals (pending == -1) the caller's lake check runs it again

    def _only_lost_jobs_left(self) -> bool:
        """After a worker died, the jobs still counted as pending may include one it had taken
        from the queue but not yet announced ("started" never arrived): nobody will end it, so
        waiting would hang. When the queue is empty and no live worker holds a job, that is
        the case. Stopping early is always safe: a live worker still busy finishes its episode
        before it reads the stop signal, and the caller reruns whatever is not in the lake."""
        if self.deaths == 0 or not _queue_empty(self.jobs):
            return False
        return all(self.in_flight.get(p) is None for p in self.workers if p not in self.finished)


def _queue_empty(jobs) -> bool:
    try:
        return jobs.empty()
    except (OSError, ValueError):  # a closed queue
        return True
