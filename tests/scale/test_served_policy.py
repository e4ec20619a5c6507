"""A local checkpoint served once, by one Ray actor every phone actor calls: the same greedy
answers as the in-process model, in batches, behind a bounded queue."""

from __future__ import annotations

import threading
from io import BytesIO

import pytest
import ray
from PIL import Image

from datalake.lake import Lake
from mockphone.phone import MockPhone
from rollout.policies import PolicyOptions
from rollout.runner import rollout
from rollout.served import SERVED, ActorGenerate, serve_policy
from rollout.spec import RolloutSpec


@pytest.fixture(scope="module")
def tiny_lake(tmp_path_factory) -> Lake:
    from training.tiny import tiny_model

    lake = Lake.init(tmp_path_factory.mktemp("served") / "lake")
    tiny_model(lake.uri)
    return lake


def _prompt(text: str) -> list[dict]:
    return [{"role": "user", "content": [{"type": "image", "text": None}, {"type": "text", "text": text}]}]


def test_the_served_policy_answers_like_the_in_process_model_and_batches(ray_cluster, tiny_lake):
    from training.infer import load_checkpoint

    phone = MockPhone()
    phone.reset(0)
    png = phone.observe().screenshot
    prompts = [f"Task: open app number {k}" for k in range(6)]
    single = load_checkpoint(tiny_lake, "tiny")
    expected = [single.generate(_prompt(p), [Image.open(BytesIO(png))], max_new_tokens=12) for p in prompts]

    actor = serve_policy(tiny_lake.uri, "tiny", "phoneloop-policy-test", max_batch=4, max_wait_ms=300, max_queue=2)
    try:
        answers: list = [None] * len(prompts)

        def ask(k: int) -> None:  # what a phone actor's ModelPolicy calls
            answers[k] = ActorGenerate(SERVED + "phoneloop-policy-test", 12, 300)(_prompt(prompts[k]), [png])

        threads = [threading.Thread(target=ask, args=(k,)) for k in range(len(prompts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        sizes = ray.get(actor.batch_sizes.remote(), timeout=60)
    finally:
        ray.kill(actor)
    assert answers == expected  # greedy: the same text batched or alone
    assert sum(sizes) == len(prompts) and len(sizes) < len(prompts)  # batching actually batched
    assert max(sizes) <= 4


def test_a_ray_rollout_of_a_checkpoint_serves_every_phone_from_one_actor(ray_cluster, tiny_lake):
    spec = RolloutSpec(policy="tiny", tasks="SettingsWifiOn", phones="mock:2", episodes=2, max_steps=2,
                       options=PolicyOptions(max_tokens=16), backend="ray")
    report = rollout(tiny_lake.uri, spec)
    assert report.errors == [] and report.episodes == 2 and report.policy_errors == 0
    rows = Lake.open(tiny_lake.uri).sql(
        "SELECT policy, outcome FROM episodes WHERE json_extract_string(meta_json, '$.rollout_id') = ?",
        [report.rollout_id]).to_pylist()
    assert [r["policy"] for r in rows] == ["tiny", "tiny"]  # the served policy keeps the checkpoint's name
    assert not [n for n in ray.util.list_named_actors() if n.startswith("phoneloop-policy-")]  # stopped after
