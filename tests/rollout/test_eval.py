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


def test_an_endpoint_that_fails_part_way_makes_the_eval_partial_and_exit_non_zero(lake):
    """The issue's case: an endpoint answering 5 requests, then 500s; the eval used to exit 0 with
    `oracle ok 6`, `endpoint ok 2`, as if the endpoint's rate were over the same instances."""
    args = ["eval", "--tasks", "SettingsWifiOn", "--phones", "mock:1", "--episodes", "3", "--max-steps", "2",
            "--retries", "0", "--lake", lake.uri]
    with ChatServer(lambda body: TAP, faults=lambda n: "500" if n >= 5 else None) as server:
        result = CliRunner().invoke(app, [*args, "--policies", f"oracle,{server.url}"])
    assert result.exit_code == 1, result.output
    ident = f"endpoint:default@127.0.0.1:{server.server_address[1]}/v1"
    assert "partial eval" in result.output and ident in result.output and "policy error" in result.output
    rows = evals(lake)
    assert rows["oracle"]["status"] == "ok" and rows[ident]["status"] == "partial"
    assert "SettingsWifiOn#2" in rows[ident]["error"]


def test_allow_partial_keeps_a_partial_eval_and_says_so(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    args = ["eval", "--tasks", "SettingsWifiOn", "--phones", "mock:1", "--episodes", "2", "--max-steps", "2",
            "--retries", "0", "--lake", lake.uri, "--allow-partial"]
    with ChatServer(lambda body: TAP, faults=lambda n: "500" if n >= 1 else None) as server:
        result = CliRunner().invoke(app, [*args, "--policies", f"oracle,{server.url}"])
    assert result.exit_code == 0, result.output
    assert "is partial" in result.output
    assert {r["status"] for r in evals(lake).values()} == {"ok", "partial"}


def test_incomplete_names_missing_jobs_and_policy_errors():
    from rollout.eval import incomplete

    results = [{"policy": "a", "task": "T", "seed": s, "failure_reason": None} for s in (0, 1, 2)] + \
              [{"policy": "b", "task": "T", "seed": 0, "failure_reason": "policy_error"},
               {"policy": "b", "task": "T", "seed": 1, "failure_reason": None}]
    gaps = incomplete(results, ["a", "b"], [("T", 0), ("T", 1), ("T", 2)])
    assert gaps == {"b": {"missing": ["T#2"], "policy_errors": ["T#0"]}}


def test_a_half_failed_eval_fails_the_loop_stage_and_the_state_names_policy_and_jobs(tmp_path):
    """A loop resumed at its eval stage (every earlier stage done), its GRPO model an endpoint that
    stops answering: the stage fails instead of recording 0/5 beside the oracle's 3/3."""
    from phoneloop.loop import STAGES, Loop, LoopConfig, StageFailed

    lake = Lake.init(tmp_path / "lake")
    config = LoopConfig(name="half", eval={"tasks": "SettingsWifiOn", "phones": "mock:1", "episodes": 3,
                                           "max_steps": 2, "baselines": [], "options": {"retries": 0}})
    with ChatServer(lambda body: TAP, faults=lambda n: "500" if n >= 3 else None) as server:
        loop = Loop(lake.uri, config)
        loop.state = {"round1": {stage: {} for stage in STAGES[:-1]}}
        loop.state["round1"]["sft"] = {"model": "oracle"}
        loop.state["round1"]["grpo"] = {"model": server.url}
        with pytest.raises(StageFailed, match="partial eval"):
            loop.run(1)
    saved = json.loads((tmp_path / "lake" / "loops" / "half" / "state.json").read_text())
    assert saved["failed"]["stage"] == "eval" and "eval" not in saved["round1"]
    assert f"127.0.0.1:{server.server_address[1]}" in saved["failed"]["error"]
    assert "SettingsWifiOn#2" in saved["failed"]["error"]


def test_paired_difference_is_b_minus_a_on_shared_instances_with_a_bootstrap_interval():
    from rollout.eval import paired_difference

    a = {("T", s): s % 2 == 0 for s in range(20)}  # 10 of 20
    b = {("T", s): True for s in range(20)} | {("U", 0): False}  # 20 of 20 (U#0: not in a, left out)
    d = paired_difference(a, b)
    assert (d["pairs"], d["diff"], d["only_a"], d["only_b"]) == (20, 0.5, 0, 10)
    assert 0 < d["low"] < 0.5 < d["high"] <= 1.0 and d["p_value"] == pytest.approx(2 * 0.5 ** 10)
    assert paired_difference(a, a)["diff"] == 0 and paired_difference(a, a)["low"] == 0
    assert paired_difference({}, b)["pairs"] == 0
