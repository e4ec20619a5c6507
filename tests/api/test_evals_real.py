"""The eval pages over rows written by the real evaluator (rollout/eval.py), not hand-made ones."""

import json

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from datalake.lake import Lake
from rollout.eval import evaluate
from rollout.spec import RolloutSpec


def test_eval_pages_render_what_the_evaluator_wrote(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    evaluate(lake.uri, ["oracle", "random:7"],
             RolloutSpec(policy="oracle", tasks="ClockAddAlarm,ClockCancelTimer", phones="mock:2", episodes=2))
    rows = {r["policy"]: r for r in Lake.open(lake.uri).sql("SELECT * FROM evals").to_pylist()}
    eval_id = rows["oracle"]["eval_id"]
    client = TestClient(create_app(lake.uri))
    body = client.get(f"/api/evals/{eval_id}").json()
    by_policy = {r["policy"]: r for r in body["rows"]}
    assert by_policy["oracle"]["summary"]["overall"]["successes"] == rows["oracle"]["successes"] == 4
    oracle_vs = by_policy["oracle"]["comparisons"][0]
    assert oracle_vs["against"] == "random:7" and oracle_vs["pairs"] == 4
    assert oracle_vs["diff"] == (oracle_vs["only_this"] - oracle_vs["only_other"]) / 4
    random_vs = by_policy["random:7"]["comparisons"][0]
    assert random_vs["against"] == "oracle" and random_vs["diff"] == -oracle_vs["diff"]
    page = client.get(f"/evals/{eval_id}")
    assert page.status_code == 200 and "random:7" in page.text


@pytest.mark.slow  # 20 oracle and 20 random episodes: ~25 s on 2 busy cores
def test_a_human_failure_on_an_oracle_eval_episode_lowers_its_count(tmp_path):
    """20 oracle episodes, all solved by the verifier; a human then judges one a failure: the eval's
    JSON, page and list say 19/20, with the Wilson interval of 19/20, and the pair test follows."""
    from datalake import schema as S
    from rollout.eval import wilson

    lake = Lake.init(tmp_path / "lake")
    evaluate(lake.uri, ["oracle", "random:7"],
             RolloutSpec(policy="oracle", tasks="ClockAddAlarm,ClockCancelTimer", phones="mock:2", episodes=10,
                         max_steps=8))
    rows = {r["policy"]: r for r in Lake.open(lake.uri).sql("SELECT * FROM evals").to_pylist()}
    eval_id = rows["oracle"]["eval_id"]
    client = TestClient(create_app(lake.uri))
    before = {r["policy"]: r for r in client.get(f"/api/evals/{eval_id}").json()["rows"]}
    assert before["oracle"]["summary"]["overall"]["successes"] == 20 == before["oracle"]["summary"]["overall"]["n"]
    assert "20 / 20" in client.get(f"/evals/{eval_id}").text
    judged = json.loads(rows["oracle"]["results_json"])[0]["episode_id"]
    lake.append("annotations", [{"annotation_id": "verdict-1", "target": "episode", "episode_id": judged,
                                 "step_index": None, "status": "accepted", "action_json": None, "step_correct": None,
                                 "outcome": "failure", "note": "the alarm is set for the wrong day",
                                 "annotator": "reviewer@example.com", "origin": "test", "created_at": S.now()}])
    client = TestClient(create_app(lake.uri))
    after = {r["policy"]: r for r in client.get(f"/api/evals/{eval_id}").json()["rows"]}
    oracle = after["oracle"]
    overall = oracle["summary"]["overall"]
    assert (overall["successes"], overall["n"]) == (19, 20) and oracle["successes"] == 19
    assert (overall["low"], overall["high"]) == wilson(19, 20)
    assert oracle["human_changed"] == 1 and oracle["summary_source"].startswith("human verdicts")
    changed = next(r for r in oracle["results"] if r["episode_id"] == judged)
    assert (changed["outcome"], changed["recorded_outcome"], changed["verified_by"]) == ("failure", "success", "human")
    vs = oracle["comparisons"][0]
    assert vs["only_this"] + vs["both"] == 19
    assert vs["low"] <= vs["diff"] <= vs["high"]  # phoneloop eval's bootstrap interval, recomputed from the verdicts
    page = client.get(f"/evals/{eval_id}").text
    assert "20 / 20" not in page and "19 / 20" in page and "changed by human verdicts" in page
    [listed] = client.get("/api/evals").json()
    assert {p["policy"]: p["successes"] for p in listed["policies"]}["oracle"] == 19
