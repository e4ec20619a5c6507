"""Policy scores: token log-probs from an endpoint become each step's score, and the
annotate preset ``low-confidence`` queues the least confident steps first. Plus the
endpoint client's time limits against servers that hang or trickle."""

import json
import math

import pytest

from annotate import push
from datalake.lake import Lake
from rollout.errors import PolicyError
from rollout.policies import PolicyOptions, openai_generate
from rollout.runner import rollout
from rollout.spec import RolloutSpec
from tests.rollout.chat_server import ChatServer

PROMPT = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def tap(x: int) -> str:
    return ('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [%d, 500]}}'
            '\n</tool_call>' % x)


def logprobs_of(n: int) -> list[float]:
    """Request n's token log-probs: a spread of confidences, not in request order."""
    return [-((n * 7) % 11) / 4 - 0.01, -0.05, -((n * 3) % 5) / 10]


def test_endpoint_logprobs_become_step_scores_and_low_confidence_finds_the_lowest(lake):
    count = iter(range(10_000))
    with ChatServer(lambda body: tap(100 + next(count)), logprobs=logprobs_of) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn,ClockAddAlarm",
                                               phones="mock:1", episodes=2, max_steps=3,
                                               options=PolicyOptions(timeout=5, retries=0)))
        asked = [body.get("logprobs") for body in server.requests]
    assert report.episodes == 4 and all(asked)
    steps = Lake.open(lake.uri).sql("SELECT episode_id, step_index, action_json, meta_json FROM steps").to_pylist()
    assert len(steps) == 12
    expected = {}
    for s in steps:  # the tap's x names the request that produced the step
        n = round(json.loads(s["action_json"])["x"] * 1000 / 1080) - 100
        values = logprobs_of(n)
        meta = json.loads(s["meta_json"])
        assert meta["logprob"] == pytest.approx(sum(values) / 3)
        assert meta["score"] == pytest.approx(math.exp(sum(values) / 3))
        expected[(s["episode_id"], s["step_index"])] = meta["score"]
    lowest = sorted(expected, key=lambda k: (expected[k], k))[:5]
    picked = [(r["episode_id"], r["step_index"]) for r in push.select_steps(lake, preset="low-confidence:5")]
    assert picked == lowest  # the five least confident steps, least confident first
    episodes = Lake.open(lake.uri).sql("SELECT episode_id, meta_json FROM episodes").to_pylist()
    for e in episodes:
        mine = [v for (eid, _), v in expected.items() if eid == e["episode_id"]]
        assert json.loads(e["meta_json"])["policy_score"] == pytest.approx(sum(mine) / len(mine))


def test_steps_of_policies_without_scores_are_not_queued_as_low_confidence(lake):
    with ChatServer(lambda body: tap(500)) as server:  # a server that sends no log-probs
        rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1", max_steps=2,
                                      options=PolicyOptions(timeout=5, retries=0)))
    rollout(lake.uri, RolloutSpec(policy="random", tasks="SettingsWifiOn", phones="mock:1", max_steps=2))
    assert Lake.open(lake.uri).sql("SELECT count(*) FROM steps").column(0)[0].as_py() >= 3
    assert push.select_steps(lake, preset="low-confidence") == []


def test_a_server_that_accepts_and_never_answers_is_cut_at_the_timeout():
    with ChatServer(lambda body: tap(500), faults=lambda n: "hang", hang_seconds=30) as server:
        with pytest.raises(PolicyError, match="failed after 2 tries"):
            openai_generate(server.url, PolicyOptions(timeout=0.3, retries=2, backoff=0.01))(PROMPT, [])
        assert [fault for _, fault in server.served] == ["hang", "hang"]  # the deadline (0.6 s) left no third try


def test_a_server_that_trickles_a_correct_answer_is_cut_at_the_timeout():
    """No read waits longer than 0.05 s, so only a limit on the whole try stops it."""
    with ChatServer(lambda body: tap(500), faults=lambda n: "trickle", trickle_seconds=0.05) as server:
        with pytest.raises(PolicyError, match="no complete answer"):
            openai_generate(server.url, PolicyOptions(timeout=0.5, retries=0))(PROMPT, [])
        slow = PolicyOptions(timeout=60, retries=0)  # the same answer, given the time it needs, is read
        assert openai_generate(server.url, slow)(PROMPT, []) == tap(500)


def test_a_server_that_refuses_logprobs_is_asked_again_without_them():
    class NoLogprobs(ChatServer):
        def fault(self, n):
            return "400 logprobs are not supported by this model" if self.requests[n].get("logprobs") else None

    with NoLogprobs(lambda body: tap(500)) as server:
        generate = openai_generate(server.url, PolicyOptions(timeout=5, retries=0))
        assert generate(PROMPT, []) == tap(500) and generate(PROMPT, []) == tap(500)
        assert [bool(body.get("logprobs")) for body in server.requests] == [True, False, False]
    assert generate.last_logprob is None
