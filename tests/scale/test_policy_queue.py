"""Back-pressure of the served policy: when its bounded queue is full, a further caller
waits (it is neither dropped nor answered with an error) until there is room, and every
caller gets its own answer — over HTTP (``rollout.model_server``) and through the Ray
``PolicyActor``."""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request

import pytest
import ray

from mockphone.phone import MockPhone
from rollout.served import SERVED, ActorGenerate, serve_policy
from rollout.model_server import ModelServer, load_model

WAIT_S = 120  # every wait below ends by itself; none is a timing assertion


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from datalake.lake import Lake
    from training.tiny import tiny_model

    root = Lake.init(tmp_path_factory.mktemp("queue") / "lake").uri
    return root, tiny_model(root)


@pytest.fixture(scope="module")
def screenshot() -> bytes:
    phone = MockPhone()
    phone.reset(0)
    png = phone.observe().screenshot
    phone.close()
    return png


class GatedServer(ModelServer):
    """The real server whose model is slow on demand: a batch waits at the gate until it opens."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate, self.entered = threading.Event(), threading.Event()
        self.gate.set()

    def _answer(self, batch) -> None:
        self.entered.set()
        assert self.gate.wait(WAIT_S), "the test never opened the gate"
        super()._answer(batch)


def _post(url: str, text: str, png: bytes) -> tuple[int, dict]:
    image = "data:image/png;base64," + base64.b64encode(png).decode()
    body = {"model": "tiny", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": image}}, {"type": "text", "text": text}]}]}
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        return response.status, json.loads(response.read())


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def test_a_caller_past_the_full_queue_waits_and_every_caller_gets_its_answer(tiny, screenshot):
    server = GatedServer(*load_model(str(tiny[1])), max_batch=1, max_wait_ms=0, max_queue=2).start()
    try:
        prompts = [f"Task: open app number {k}" for k in range(4)]
        expected = [_post(server.url, p, screenshot)[1]["choices"][0]["message"]["content"] for p in prompts]
        server.gate.clear()
        server.entered.clear()
        results: dict[int, tuple[int, dict]] = {}
        failures: list[BaseException] = []

        def call(k: int) -> None:
            try:
                results[k] = _post(server.url, prompts[k], screenshot)
            except BaseException as exc:  # noqa: BLE001  reported below
                failures.append(exc)

        threads = {k: threading.Thread(target=call, args=(k,), daemon=True) for k in range(4)}
        threads[0].start()
        assert server.entered.wait(WAIT_S)  # caller 0's batch is in the (slow) model
        threads[1].start()
        threads[2].start()
        _until(lambda: server._queue.full(), "callers 1 and 2 fill the queue (max_queue=2)")
        threads[3].start()
        _until(lambda: len(server._queue.not_full._waiters) == 1, "caller 3 blocks on the full queue")
        assert 3 not in results and not failures  # waiting: not dropped, not refused
        assert server.batch_sizes.count(1) == 4  # only the warm-up calls were answered so far
        server.gate.set()
        for t in threads.values():
            t.join(timeout=WAIT_S)
        assert not failures, failures
        assert sorted(results) == [0, 1, 2, 3]
        assert all(status == 200 for status, _ in results.values())
        answers = [results[k][1]["choices"][0]["message"]["content"] for k in range(4)]
        assert answers == expected  # each caller got its own (greedy) answer
        assert len(server.batch_sizes) == 8 and max(server.batch_sizes) == 1
    finally:
        server.gate.set()
        server.stop()


def test_a_caller_that_never_finds_room_gets_a_clear_error_not_a_hang(tiny, screenshot):
    from rollout.model_server import _Request

    server = GatedServer(*load_model(str(tiny[1])), max_batch=1, max_wait_ms=0, max_queue=1,
                         caller_timeout_s=0.5).start(http=False)
    server.gate.clear()
    try:
        threading.Thread(target=server.submit, args=(_Request([], [], 4),), daemon=True).start()
        assert server.entered.wait(WAIT_S)
        threading.Thread(target=server.submit, args=(_Request([], [], 4),), daemon=True).start()
        _until(lambda: server._queue.full(), "the queue is full")
        late = server.submit(_Request([], [], 4))
        assert late.error and "queue stayed full (1 waiting)" in late.error
    finally:
        server.gate.set()
        server.stop()


def test_the_policy_actor_answers_every_caller_past_its_bound(ray_cluster, tiny, screenshot):
    """max_queue=1, max_batch=1: the actor takes 6 calls at once; 12 callers all get answers."""
    root, _ = tiny
    prompts = [f"Task: open app number {k}" for k in range(12)]
    actor = serve_policy(str(root), "tiny", "phoneloop-policy-queue", max_batch=1, max_wait_ms=0, max_queue=1)
    try:
        ask = ActorGenerate(SERVED + "phoneloop-policy-queue", 10, WAIT_S)
        message = [{"role": "user", "content": [{"type": "image", "text": None}, {"type": "text", "text": "{}"}]}]

        def prompt(k: int) -> list[dict]:
            return [{**message[0], "content": [message[0]["content"][0], {"type": "text", "text": prompts[k]}]}]

        alone = [ask(prompt(k), [screenshot]) for k in range(3)]
        answers: dict[int, str] = {}
        threads = [threading.Thread(target=lambda k=k: answers.__setitem__(k, ask(prompt(k), [screenshot])),
                                    daemon=True) for k in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=WAIT_S)
        sizes = ray.get(actor.batch_sizes.remote(), timeout=60)
    finally:
        ray.kill(actor)
    assert sorted(answers) == list(range(12))  # nobody dropped, nobody errored
    assert [answers[k] for k in range(3)] == alone
    assert sum(sizes) == 15 and max(sizes) == 1
