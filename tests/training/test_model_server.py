"""The batching loopback endpoint for local checkpoints, and rollouts of a local model through it."""

import json
import math
import threading

import pytest

from datalake.lake import Lake
from mockphone.phone import MockPhone
from rollout.model_server import ModelServer
from rollout.policies import PolicyOptions, openai_generate
from rollout.runner import rollout
from rollout.spec import RolloutSpec
from training.infer import load_checkpoint


def _prompt(text):
    return [{"role": "user", "content": [{"type": "image", "text": None}, {"type": "text", "text": text}]}]


def test_batched_answers_equal_one_at_a_time_greedy_answers(train_lake):
    phone = MockPhone()
    phone.reset(0)
    png = phone.observe().screenshot
    prompts = [f"Task: open app number {k}" for k in range(4)]
    single = load_checkpoint(train_lake, "tiny")
    from io import BytesIO

    from PIL import Image
    expected = [single.generate(_prompt(p), [Image.open(BytesIO(png))], max_new_tokens=12) for p in prompts]

    server = ModelServer.load(train_lake.uri, "tiny", max_batch=4, max_wait_ms=200).start()
    try:
        generate = openai_generate(server.url, PolicyOptions(max_tokens=12, timeout=120))
        answers = [None] * 4

        def ask(k):
            answers[k] = generate(_prompt(prompts[k]), [png])

        threads = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.stop()
    assert answers == expected
    assert max(server.batch_sizes) > 1 and sum(server.batch_sizes) == 4


def test_rollout_of_a_local_checkpoint_serves_all_phones_from_one_model(train_lake):
    report = rollout(train_lake.uri, RolloutSpec(policy="tiny", tasks="SettingsWifiOn", phones="mock:2", episodes=2,
                                                 max_steps=2, options=PolicyOptions(max_tokens=16)))
    assert report.errors == [] and report.episodes == 2
    rows = Lake.open(train_lake.uri).sql(
        f"SELECT policy, outcome FROM episodes WHERE json_extract_string(meta_json, '$.rollout_id') = "
        f"'{report.rollout_id}'").to_pylist()
    assert [r["policy"] for r in rows] == ["tiny", "tiny"]
    assert {r["outcome"] for r in rows} == {"failure"}  # a random-weight model does not solve tasks
    steps = Lake.open(train_lake.uri).sql(
        "SELECT s.meta_json FROM steps s JOIN episodes e USING (episode_id) WHERE "
        f"json_extract_string(e.meta_json, '$.rollout_id') = '{report.rollout_id}'").to_pylist()
    metas = [json.loads(r["meta_json"]) for r in steps]
    vocab = load_checkpoint(train_lake, "tiny").model.config.get_text_config().vocab_size
    # greedy tokens of a near-uniform random model: each at least as likely as 1/vocab, at most 1
    assert steps and all(-math.log(vocab) - 1e-6 <= m["logprob"] <= 0 for m in metas)
    assert all(m["score"] == pytest.approx(math.exp(m["logprob"])) for m in metas)
