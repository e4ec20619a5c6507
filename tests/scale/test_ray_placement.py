"""`--backend ray` never hangs silently (issue 32), on a real local Ray cluster (2 CPUs, no custom
resources): an actor that cannot be placed is refused before anything runs, naming the missing
resource; one left pending past the timeout is an error; an actor whose process dies mid-job has that
job run again exactly once."""

from __future__ import annotations

import os
import signal
import time

import pytest
import ray

from fleet.backends import RayBackend
from fleet.errors import ActorPending, PlacementInfeasible
from fleet.pool import Pool

WORKER = "tests.scale.ray_jobs:work"
PHONE = "127.0.0.1:5037/emulator-5554"


def _our_actors(run: str) -> list[str]:
    return [a for a in ray.util.list_named_actors() if a.startswith(f"phoneloop-{run}-")]


def _gone(run: str, timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _our_actors(run):
            return True
        time.sleep(0.2)
    return False


def test_an_adb_actor_on_a_cluster_without_its_resource_is_refused_naming_it(ray_cluster):
    backend = RayBackend(target=WORKER, run="noadb")
    started = time.monotonic()
    with pytest.raises(PlacementInfeasible) as err:
        Pool(backend, "adb", [PHONE], [{"job": 0, "seconds": 0}], ())
    assert time.monotonic() - started < 20  # seconds, not a pending actor forever (not a timing benchmark)
    assert f"'adb:{PHONE}'" in str(err.value) and "(nor 'adb:emulator-5554')" in str(err.value)
    assert _our_actors("noadb") == []  # nothing was started


def test_more_phones_than_the_cpus_hold_are_refused_and_the_started_actors_killed(ray_cluster):
    backend = RayBackend(target=WORKER, run="nocpu")
    phones = [f"mock-{i}" for i in range(5)]  # 5 x 0.5 CPU on a 2-CPU cluster
    with pytest.raises(PlacementInfeasible, match="5 phone actors of 0.5 CPU each.*2 CPU, room for 4"):
        Pool(backend, "mock", phones, [{"job": i, "seconds": 0} for i in range(5)], ())
    assert _gone("nocpu")  # the four that fitted were killed with the refusal


def test_an_actor_still_pending_after_the_timeout_is_an_error_naming_its_phone(ray_cluster):
    @ray.remote(num_cpus=2)
    class Hog:  # takes both CPUs: the placement check passes (the totals suffice), the actor cannot start
        def ping(self):
            return True

    hog = Hog.remote()
    ray.get(hog.ping.remote())
    try:
        backend = RayBackend(target=WORKER, run="pending", pending_timeout=3)
        pool = Pool(backend, "mock", ["mock-0"], [{"job": 0, "seconds": 0}], ())
        started = time.monotonic()
        with pytest.raises(ActorPending, match="mock-0 was still pending after 3 s: it needs {'CPU': 0.5}"):
            pool.run(lambda message: 1)
        assert time.monotonic() - started < 30
        assert _gone("pending")
    finally:
        ray.kill(hog)


def test_a_job_whose_actor_process_died_runs_again_once(ray_cluster):
    backend = RayBackend(target=WORKER, run="restart")
    jobs = [{"job": i, "seconds": 0.6} for i in range(6)]
    pool = Pool(backend, "mock", ["mock-0", "mock-1"], jobs, ())
    results: list[int] = []
    started: list[tuple[str, int]] = []
    killed: dict = {}

    def handle(message: dict) -> int:
        if message["kind"] == "pid" and not killed:  # the first actor to start a job
            killed.update(phone=message["phone"], job=pool.in_flight[message["phone"]]["job"])
            os.kill(message["pid"], signal.SIGKILL)  # the actor's process dies mid-job
        if message["kind"] == "result":
            results.append(message["job"]["job"])
            return 1
        return 0

    real_receive = pool._receive

    def receive(message, handle_):
        if message["kind"] == "started":
            started.append((message["phone"], message["job"]["job"]))
        real_receive(message, handle_)

    pool._receive = receive  # only records what arrives; the pool's own logic runs unchanged
    assert pool.run(handle, on_death=lambda *a: None) == 0
    assert pool.deaths == 1 and killed
    assert sorted(results) == list(range(6))  # every job ended once: the killed one neither lost nor doubled
    assert [j for _, j in started].count(killed["job"]) == 2  # it was taken again after the death
    other = ({"mock-0", "mock-1"} - {killed["phone"]}).pop()
    assert (other, killed["job"]) in started
