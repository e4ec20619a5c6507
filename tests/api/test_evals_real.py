"""The eval pages over rows written by the real evaluator (rollout/eval.py), not hand-made ones."""

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
