import base64
import json
from pathlib import Path

import pytest

from datalake.lake import Lake
from rollout.errors import PhonesSpecError, PolicyError
from rollout.eval import evaluate, wilson
from rollout.policies import ModelPolicy, PolicyOptions, RandomPolicy, make_policy, openai_generate
from rollout.runner import rollout
from rollout.spec import RolloutSpec, parse_phones
from tests.rollout.chat_server import ChatServer

TAP_CENTRE = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'
DONE = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'


def episodes(lake, where="true"):
    from datalake.lake import Lake

    return Lake.open(lake.uri).sql(f"SELECT * FROM episodes WHERE {where} ORDER BY episode_id").to_pylist()


def test_oracle_rollout_succeeds_and_is_recorded_as_rollout(lake):
    report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ClockAddAlarm,SettingsWifiOn", phones="mock:2",
                                           episodes=2, round=3))
    assert (report.episodes, report.written, report.success_rate, report.errors) == (4, 4, 1.0, [])
    rows = episodes(lake)
    assert {(r["source"], r["policy"], r["round"], r["outcome"], r["verified_by"]) for r in rows} == {
        ("rollout", "oracle", 3, "success", "verifier")}
    assert {json.loads(r["meta_json"])["rollout_id"] for r in rows} == {report.rollout_id}


def test_repeating_a_deterministic_rollout_records_new_episodes(lake):
    spec = RolloutSpec(policy="oracle", tasks="ClockAddAlarm", phones="mock:1")
    rollout(lake.uri, spec)
    rollout(lake.uri, spec)
    assert len(episodes(lake)) == 2


def test_random_policy_fails_tasks_it_does_not_do(lake):
    report = rollout(lake.uri, RolloutSpec(policy="random:1", tasks="ClockAddAlarm,SettingsWifiOn", phones="mock:1"))
    assert report.episodes == 2 and report.outcomes == {"failure": 2}


def test_a_policy_that_says_done_without_doing_the_task_fails(lake):
    with ChatServer(lambda body: DONE) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1"))
    assert report.outcomes == {"failure": 1}
    (row,) = episodes(lake)
    assert row["num_steps"] == 1 and row["policy"] == f"endpoint:default@{server.url.split('://')[1]}"


def test_unparseable_model_output_is_an_invalid_step_not_a_crash(lake):
    with ChatServer(lambda body: "I think I should tap somewhere nice") as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1",
                                               max_steps=3))
    assert report.episodes == 1 and report.invalid_steps == 3 and report.outcomes == {"failure": 1}
    from datalake.lake import Lake

    steps = Lake.open(lake.uri).sql("SELECT action_type, raw_output FROM steps ORDER BY step_index").to_pylist()
    assert [s["action_type"] for s in steps] == ["wait"] * 3
    assert all(s["raw_output"].startswith("invalid: ") and "tap somewhere nice" in s["raw_output"] for s in steps)


def test_endpoint_requests_carry_the_screenshot_and_the_prompt():
    with ChatServer(lambda body: TAP_CENTRE) as server:
        options = PolicyOptions(model="qwen-test", api_key="k")
        policy = ModelPolicy("endpoint", openai_generate(server.url, options), options)
        from mockphone.phone import MockPhone
        phone = MockPhone()
        phone.reset(0)
        obs = phone.observe()
        action, raw = policy.act("Turn on Wi-Fi", obs, [])
        request = server.requests[0]
    assert action.to_dict() == {"type": "tap", "x": 540.0, "y": 1200.0} and raw == TAP_CENTRE
    assert request["model"] == "qwen-test"
    user = request["messages"][1]["content"]
    assert user[0]["type"] == "image_url"
    png = base64.b64decode(user[0]["image_url"]["url"].removeprefix("data:image/png;base64,"))
    assert png == obs.screenshot
    assert "Task: Turn on Wi-Fi" in user[1]["text"]


def test_endpoint_errors_are_policy_errors():
    options = PolicyOptions(retries=0, timeout=2)
    with ChatServer(lambda body: "", status=400) as server:
        with pytest.raises(PolicyError, match="answered 400"):
            openai_generate(server.url, options)([{"role": "user", "content": []}], [])
    with pytest.raises(PolicyError, match="failed after 1 tries"):
        openai_generate("http://127.0.0.1:9/v1", options)([{"role": "user", "content": []}], [])


def test_random_policy_acts_on_screen():
    from mockphone.phone import MockPhone

    phone = MockPhone()
    phone.reset(0)
    policy = RandomPolicy(3)
    for _ in range(20):
        obs = phone.observe()
        action, _ = policy.act("x", obs, [None])
        w, h = obs.size
        assert all(0 <= x < w and 0 <= y < h for x, y in action.points())
        phone.act(action)


@pytest.mark.parametrize("phones", ["mock:0", "mock", "adb:", "usb:1", "mock:x"])
def test_bad_phones_spec(phones):
    with pytest.raises(PhonesSpecError):
        parse_phones(phones)


def test_unknown_task_selector_and_missing_oracle_task(lake):
    with pytest.raises(PolicyError, match="task selector 'app:nope'"):
        rollout(lake.uri, RolloutSpec(policy="oracle", tasks="app:nope"))
    with pytest.raises(PolicyError, match="needs a task"):
        make_policy("oracle", None, None)


def test_wilson_interval():
    low, high = wilson(7, 7)
    assert high == 1.0 and 0.6 < low < 0.7
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(5, 10)
    assert low < 0.5 < high and abs((low + high) / 2 - 0.5) < 1e-9


def test_evaluate_compares_policies_per_category_and_saves_the_table(lake):
    spec = RolloutSpec(policy="oracle", tasks="ClockAddAlarm,HotelSearchBudget", phones="mock:2")
    report = evaluate(lake.uri, ["oracle", "random"], spec)
    assert report.by_category["single-app"]["oracle"]["rate"] == 1.0
    assert report.by_category["mini-app"]["random"]["rate"] == 0.0
    assert "| category | oracle | random |" in report.markdown
    folder = Path(report.folder)
    assert (folder / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from datalake.lake import Lake

    rows = {r["policy"]: r for r in Lake.open(lake.uri).sql("SELECT * FROM evals").to_pylist()}
    assert set(rows) == {"oracle", "random"} and rows["oracle"]["status"] == "ok"
    assert json.loads(rows["oracle"]["summary_json"])["by_app"]["clock"]["n"] == 1


def test_round_k_rollouts_are_selectable_by_the_next_rounds_recipe(lake):
    from curation.build import curate
    from curation.recipe import parse_recipe

    rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ClockAddAlarm", phones="mock:1", round=1))
    rollout(lake.uri, RolloutSpec(policy="random", tasks="ClockAddAlarm", phones="mock:1", round=1))
    recipe = parse_recipe("name: next\nselect: SELECT episode_id FROM episodes WHERE source = 'rollout' AND round = 1 "
                          "AND outcome = 'success' AND verified_by = 'verifier'\nexports:\n  - {format: episodes}\n")
    dv = curate(lake, recipe)
    assert dv.counts["episodes"] == 1  # the verified success, not the random failure


def test_a_rollouts_episodes_can_be_selected_for_the_annotation_queue(lake):
    from annotate.push import select_steps

    first = rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ClockAddAlarm", phones="mock:1"))
    rollout(lake.uri, RolloutSpec(policy="random", tasks="ClockAddAlarm", phones="mock:1"))
    rows = select_steps(lake, where=f"json_extract_string(e.meta_json, '$.rollout_id') = '{first.rollout_id}'")
    assert rows and {r["episode_id"].split("-")[0] for r in rows} == {first.rollout_id}


def test_a_one_phone_rollout_runs_its_worker_in_this_process_and_loses_nothing(lake):
    import multiprocessing

    children = []
    spec = RolloutSpec(policy="oracle", tasks="SettingsWifiOn,ClockAddAlarm", phones="mock:1", episodes=3)
    report = rollout(lake.uri, spec, progress=lambda r: children.append(multiprocessing.active_children()))
    assert children and all(not c for c in children)  # no spawned worker
    assert (report.episodes, report.written, report.errors) == (6, 6, [])
    ids = Lake.open(lake.uri).sql("SELECT DISTINCT episode_id FROM episodes").column(0).to_pylist()
    assert len(ids) == 6
