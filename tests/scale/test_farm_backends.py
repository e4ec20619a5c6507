"""`collect run` schedules through one code path whatever the backend: the local farm's
threads and the Ray farm's actors are both driven by ``fleet.pool.Pool``, take the
same decisions on the same drop-out, and leave the same episodes in the lake."""

from __future__ import annotations

import pytest
import ray

from collectors.farm import collect_on_devices
from datalake.lake import Lake
from fleet import pool
from tests.adb.conftest import server  # noqa: F401  (the virtual adb server fixture)
from tests.factory import ray_seeing_phones

SERIALS = ("emulator-5554", "emulator-5556")
TASKS = ["NotesCreate", "ContactsAdd"]  # every (task, seed) gives different content


@pytest.fixture(scope="module")
def adb_ray():
    """A local cluster whose one node "sees" the virtual adb server's two phones."""
    ray_seeing_phones(SERIALS)
    yield
    ray.shutdown()


@pytest.fixture
def decisions(monkeypatch):
    """Every Pool this test makes, and what it decided: the jobs it handed back to the queue
    and the job-ending messages it counted (the real methods run; this only records)."""
    log: dict[str, list] = {"pools": [], "requeued": [], "ended": []}
    init, requeue, receive = pool.Pool.__init__, pool.Pool.requeue, pool.Pool._receive

    def recording_init(self, backend, kind, phones, todo, args, **kw):
        log["pools"].append((type(backend).__name__, kind, len(phones), len(todo), kw))
        init(self, backend, kind, phones, todo, args, **kw)

    def recording_requeue(self, job):
        log["requeued"].append((job["task"], job["seed"], job["attempts"], len(job["phones"])))
        requeue(self, job)

    def recording_receive(self, message, handle):
        if message["kind"] in ("episode", "offline"):
            job = message["job"]
            log["ended"].append((message["kind"], job["task"], job["seed"], job["attempts"]))
        receive(self, message, handle)

    monkeypatch.setattr(pool.Pool, "__init__", recording_init)
    monkeypatch.setattr(pool.Pool, "requeue", recording_requeue)
    monkeypatch.setattr(pool.Pool, "_receive", recording_receive)
    return log


def _finished(uri: str) -> list[tuple]:
    rows = Lake.open(uri).sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed, outcome, "
                              "json_extract_string(meta_json, '$.failure_reason') AS why FROM episodes").to_pylist()
    return sorted((r["task"], r["seed"], r["outcome"], r["why"] == "device_offline") for r in rows)


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_both_farm_backends_take_pools_decisions_on_a_drop_out(backend, server, tmp_path, decisions,  # noqa: F811
                                                               request):
    if backend == "ray":
        request.getfixturevalue("adb_ray")
    lake = Lake.init(tmp_path / "lake")
    server.devices[0].offline_after = 12  # a few steps into its first episode
    report = collect_on_devices(lake, list(SERIALS), TASKS, seeds=[0, 1], port=server.port, backoff=0.02,
                                reconnects=2, backend=backend)
    runner = {"local": "ThreadBackend", "ray": "RayBackend"}[backend]
    assert decisions["pools"] == [(runner, "adb", 2, 4, {"every_phone": True})]  # one pass, one Pool
    # the dropped job went back to the queue once, at its second attempt, naming the phone it left
    [(task, seed, attempts, tried)] = decisions["requeued"]
    assert (attempts, tried) == (1, 1)
    assert ("offline", task, seed, 0) in decisions["ended"] and ("episode", task, seed, 1) in decisions["ended"]
    assert sorted(e for e in decisions["ended"] if e[0] == "episode") == sorted(
        ("episode", t, s, 1 if (t, s) == (task, seed) else 0) for t in TASKS for s in (0, 1))
    # what the lake holds: the four jobs once each, and the dropped attempt kept as device_offline
    assert report.dropped == 1 and report.written == 5
    assert _finished(lake.uri) == sorted([(t, s, "success", False) for t in TASKS for s in (0, 1)]
                                         + [(task, seed, "unknown", True)])
