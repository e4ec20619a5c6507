"""Evaluations as data: the evals table, policy identities, paired comparisons, eval episodes kept out of training."""

import json

import pytest
from typer.testing import CliRunner

from datalake.lake import Lake
from phoneloop.cli import app
from rollout.eval import evaluate, paired
from rollout.spec import RolloutSpec
from tests.rollout.chat_server import ChatServer

TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'


def evals(lake):
    return {r["policy"]: r for r in Lake.open(lake.uri).sql("SELECT * FROM evals").to_pylist()}


def test_random_seeds_and_two_endpoints_of_one_model_stay_separate_columns(lake):
    spec = RolloutSpec(policy="oracle", tasks="SettingsWifiOn", phones="mock:2", episodes=2, max_steps=2)
    with ChatServer(lambda body: TAP) as one, ChatServer(lambda body: TAP) as two:
        report = evaluate(lake.uri, ["oracle", "random", "random:7", one.url, two.url], spec)
    names = report.policies
    assert len(set(names)) == 5 and "random:7" in names and "random" in names
    rows = evals(lake)
    assert set(rows) == set(names) and all(r["status"] == "ok" and r["episodes"] == 2 for r in rows.values())
    endpoint = json.loads(rows[names[3]]["policy_json"])
    assert (endpoint["kind"], endpoint["url"], endpoint["model"]) == ("endpoint", one.url, "default")
    assert json.loads(rows["oracle"]["seeds_json"]) == [0, 1] and rows["oracle"]["task_set"] == spec.tasks
    assert "| category | oracle | random | random:7 |" in report.markdown
    eps = Lake.open(lake.uri).sql("SELECT DISTINCT purpose FROM episodes").column(0).to_pylist()
    assert eps == ["eval"]


def test_paired_comparison_counts_discordant_seeds_and_tests_them():
    results = [{"policy": p, "task": "T", "seed": s, "outcome": "success" if ok else "failure"}
               for p, wins in (("a", [1] * 10), ("b", [0] * 10)) for s, ok in enumerate(wins)]
    (c,) = paired(results, ["a", "b"])
    assert (c["pairs"], c["only_a"], c["only_b"], c["both"]) == (10, 10, 0, 0)
    assert c["p_value"] == pytest.approx(2 * 0.5 ** 10)  # exact binomial, two-sided
    same = paired([{**r, "outcome": "success"} for r in results], ["a", "b"])
    assert (same[0]["both"], same[0]["p_value"]) == (10, 1.0)


def test_every_category_of_the_selector_is_in_the_table_even_without_results(lake):
    spec = RolloutSpec(policy="oracle", tasks="SettingsWifiOn,CrossEventToAlarm", phones="mock:1")
    report = evaluate(lake.uri, ["oracle"], spec)
    assert set(report.by_category) == {"single-app", "cross-app"}


def test_an_eval_with_a_policy_that_cannot_run_exits_non_zero_and_names_it(lake):
    result = CliRunner().invoke(app, ["eval", "--policies", "oracle,http://127.0.0.1:9/v1", "--tasks",
                                      "SettingsWifiOn", "--phones", "mock:1", "--episodes", "1", "--retries", "0",
                                      "--lake", lake.uri])
    assert result.exit_code == 1, result.output
    assert "did not run" in result.output and "endpoint:default@127.0.0.1:9/v1" in result.output
    rows = evals(lake)
    assert rows["oracle"]["status"] == "ok" and rows["endpoint:default@127.0.0.1:9/v1"]["status"] == "failed"


def test_an_eval_episode_never_appears_in_a_dataset_built_by_the_shipped_recipes(lake):
    from collectors.collect import collect
    from curation.build import curate
    from curation.recipe import load_recipe
    from mockphone.phone import MockPhone
    from phoneloop.loop import ROOT
    from phones.episode import OraclePolicy

    phone = MockPhone()
    collect(lake, phone, OraclePolicy.factory, ["SettingsWifiOn", "ClockAddAlarm", "NotesCreate"], seeds=[0])
    phone.close()
    report = evaluate(lake.uri, ["oracle"], RolloutSpec(policy="oracle", tasks="SettingsWifiOn,ClockAddAlarm",
                                                          phones="mock:1", episodes=2))
    fresh = Lake.open(lake.uri)
    eval_ids = set(fresh.sql("SELECT episode_id FROM episodes WHERE purpose = 'eval'").column(0).to_pylist())
    assert len(eval_ids) == 4 and report.by_category["single-app"]["oracle"]["rate"] == 1.0
    for recipe in sorted((ROOT / "examples" / "recipes").glob("*.yaml")):
        dv = curate(fresh, load_recipe(recipe))
        ids = _dataset_episode_ids(dv)
        assert ids and not (ids & eval_ids), recipe.name


def _dataset_episode_ids(dv) -> set[str]:
    import pyarrow.parquet as pq
    from pathlib import Path

    files = list(Path(dv.path).rglob("*.parquet"))
    return {eid for f in files if "episode_id" in pq.read_schema(f).names
            for eid in pq.read_table(f, columns=["episode_id"]).column(0).to_pylist()}
