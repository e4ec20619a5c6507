"""Rollouts against a flaky endpoint and phones that drop out: nothing lost, nothing doubled."""

import json

from tests.adb.helpers import free_port  # noqa: F401  (sets ANDROID_ADB_SERVER_PORT before adbutils loads)

from datalake.lake import Lake  # noqa: E402
from mockphone.adb import VirtualAdbServer  # noqa: E402
from rollout.policies import PolicyOptions  # noqa: E402
from rollout.runner import rollout  # noqa: E402
from rollout.spec import RolloutSpec, jobs_for  # noqa: E402
from tests.rollout.chat_server import ChatServer  # noqa: E402

TAP = '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n</tool_call>'
FAST = PolicyOptions(timeout=0.5, retries=2, backoff=0.01)


def rows(lake, rollout_id):
    return Lake.open(lake.uri).sql(
        "SELECT episode_id, task, num_steps, outcome, failure_reason, purpose, meta_json FROM episodes "
        "WHERE json_extract_string(meta_json, '$.rollout_id') = ? ORDER BY episode_id", [rollout_id]).to_pylist()


def flaky(n: int) -> str | None:
    """Transient faults early on, then the endpoint goes down for good after request 14."""
    return {1: "500", 3: "garbage", 4: "hang", 6: "drop", 8: "wrong", 9: "429"}.get(n) or ("503" if n >= 14 else None)


def test_a_flaky_endpoint_loses_no_finished_episode_and_records_its_retries(lake):
    spec = RolloutSpec(policy="", tasks="SettingsWifiOn,ClockAddAlarm", phones="mock:2", episodes=2, max_steps=3,
                       options=FAST)
    with ChatServer(lambda body: TAP, faults=flaky, hang_seconds=5) as server:
        report = rollout(lake.uri, RolloutSpec(**{**spec.__dict__, "policy": server.url}))
    recorded = rows(lake, report.rollout_id)
    assert report.written == report.episodes == len(recorded) >= 1
    assert report.episodes + len(report.errors) == len(jobs_for(spec))  # every job: an episode or a reason
    assert all("before the first step" in e for e in report.errors)
    metas = [json.loads(r["meta_json"]) for r in recorded]
    assert report.retries == sum(m.get("retries", 0) for m in metas) >= 5  # the scripted transient faults
    errored = [r for r in recorded if r["failure_reason"] == "policy_error"]
    assert len(errored) == report.policy_errors >= 1
    assert all(r["num_steps"] >= 1 and r["outcome"] == "failure" for r in errored)  # steps kept
    assert all("failed after" in json.loads(r["meta_json"])["policy_error"] for r in errored)


def test_a_hung_endpoint_ends_the_episode_as_a_policy_error(lake):
    with ChatServer(lambda body: TAP, faults=lambda n: "hang" if n >= 1 else None, hang_seconds=30) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1",
                                               max_steps=3, options=PolicyOptions(timeout=0.3, retries=2,
                                                                                  backoff=0.01)))
        served = list(server.served)
    (row,) = rows(lake, report.rollout_id)
    assert (row["num_steps"], row["failure_reason"], report.policy_errors) == (1, "policy_error", 1)
    # one request costs at most timeout x retries: two hung tries of 0.3 s, then the episode ends
    assert [fault for _, fault in served] == ["ok", "hang", "hang"]


def test_a_wrong_api_key_fails_at_once_without_retries(lake):
    with ChatServer(lambda body: TAP, status=401) as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1",
                                               options=FAST))
        assert len(server.requests) == 1
    assert report.episodes == 0 and "answered 401" in report.errors[0]


def test_a_rerun_with_the_same_run_id_skips_what_the_lake_holds(lake):
    spec = RolloutSpec(policy="random:3", tasks="SettingsWifiOn,ClockAddAlarm", phones="mock:2", episodes=2,
                       run_id="r1/rollout")
    first = rollout(lake.uri, spec)
    ids = [r["episode_id"] for r in rows(lake, first.rollout_id)]
    again = rollout(lake.uri, spec)
    assert again.rollout_id == first.rollout_id and (again.skipped, again.episodes, again.written) == (4, 0, 0)
    assert [r["episode_id"] for r in rows(lake, first.rollout_id)] == ids and len(set(ids)) == 4
    other = rollout(lake.uri, RolloutSpec(**{**spec.__dict__, "policy": "random:7"}))
    assert other.rollout_id != first.rollout_id and other.episodes == 4  # another policy, other ids


def test_a_phone_that_drops_out_is_recorded_and_its_episode_rerun_on_another_phone(lake):
    server = VirtualAdbServer(phones=2).start()
    server.devices[0].offline_after = 12  # the cable is pulled part-way through its first episode
    try:
        report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ClockAddAlarm,SettingsWifiOn", episodes=2,
                                               phones="adb:emulator-5554,emulator-5556"), adb_port=server.port)
    finally:
        server.stop()
    recorded = rows(lake, report.rollout_id)
    dropped = [r for r in recorded if r["failure_reason"] == "device_offline"]
    assert report.errors == [] and report.device_offline == len(dropped) == 1
    assert (report.episodes, report.outcomes, report.success_rate) == (4, {"success": 4}, 1.0)
    (gone,) = dropped
    redone = [r for r in recorded if r["task"] == gone["task"] and r["failure_reason"] is None
              and json.loads(r["meta_json"])["seed"] == json.loads(gone["meta_json"])["seed"]]
    assert [json.loads(r["meta_json"])["phone"] for r in redone] == ["emulator-5556"]
    assert json.loads(redone[0]["meta_json"])["attempt"] == 2
