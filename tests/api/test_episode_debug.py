"""An episode as a researcher debugs it: what the model said, why a step was invalid, the UI tree."""

import re

import pytest

from api.browse import INVALID
from rollout.policies import INVALID as POLICY_INVALID
from tests.api.conftest import EVAL_ID, OUTPUTS, ROLLOUT_ID


def test_viewer_reads_the_policies_invalid_marker():
    assert INVALID == POLICY_INVALID


def test_episode_json_has_raw_output_parse_errors_and_run_facts(rclient, research):
    body = rclient.get(f"/api/episodes/{research['rollout'].episode_id}").json()
    assert (body["stop"], body["score"], body["outcome"], body["verified_by"]) == ("max_steps", 0.0, "failure",
                                                                                    "verifier")
    assert (body["rollout_id"], body["eval_id"], body["seed"]) == (ROLLOUT_ID, EVAL_ID, 3)
    assert (body["policy"], body["round"], body["perturbation"]) == ("sft-r1", 1, "light")
    steps = body["steps"]
    assert [s["invalid"] for s in steps] == [False, True, True, False]
    assert [s["output"]["text"] for s in steps] == OUTPUTS  # exactly what the model said
    assert steps[0]["output"] == {"valid": True, "error": None, "text": OUTPUTS[0]}
    assert steps[0]["action"] == {"type": "open_app", "app": "clock"}
    assert "cannot parse action" in steps[1]["output"]["error"] and "\n" not in steps[1]["output"]["error"]
    assert steps[2]["output"]["error"] == "tap outside the 1080x2400 screen"
    assert steps[1]["raw_output"].startswith("invalid: ") and steps[1]["action"]["type"] == "wait"
    assert all(s["has_tree"] for s in steps)


def test_step_tree_is_the_parsed_ui_tree_with_the_target_marked(rclient, research):
    tree = rclient.get(f"/api/episodes/{research['tree'].episode_id}/steps/0/tree").json()
    assert [n["class_name"] for n in tree["nodes"]] == ["android.widget.FrameLayout", "android.widget.Button"]
    assert tree["nodes"][1]["parent"] == 0 and tree["nodes"][1]["text"] == "OK"
    assert tree["target"] == 1
    empty = rclient.get(f"/api/episodes/{research['tree'].episode_id}/steps/1/tree").json()
    assert empty["nodes"] == [] and empty["target"] is None
    assert rclient.get(f"/api/episodes/{research['tree'].episode_id}/steps/9/tree").status_code == 404


def test_episode_page_shows_the_invalid_step_as_invalid_with_raw_output(rclient, research):
    html = rclient.get(f"/episodes/{research['rollout'].episode_id}").text
    sections = re.split(r'<section class="step"', html)[1:]
    assert len(sections) == 4
    invalid = sections[1]
    assert 'class="tag invalid">invalid</span>' in invalid and "cannot parse action" in invalid
    assert "I should tap the add button, {&#39;type&#39;: tap, x: 500}" in invalid
    assert 'data-action="invalid"' in invalid and "recorded dot" not in invalid
    assert "open_app app=&#39;clock&#39;" in sections[0] or "open_app app='clock'" in sections[0]
    for fact in ('id="stop">max_steps', 'id="score">0.000', "light", ROLLOUT_ID, f'href="/evals/{EVAL_ID}"'):
        assert fact in html
    assert html.count('class="thumb') == 4 and html.count('class="thumb invalid"') == 2


def test_episode_page_links_neighbours_in_the_listing_it_came_from(rclient):
    query = {"q": "alarm", "sort": "instruction"}
    listing = [e["episode_id"] for e in rclient.get("/api/episodes", params={**query, "limit": 500}).json()["items"]]
    html = rclient.get(f"/episodes/{listing[1]}", params=query).text
    assert f'id="prev-episode" rel="prev" href="/episodes/{listing[0]}?q=alarm&amp;sort=instruction"' in html
    assert f'id="next-episode" rel="next" href="/episodes/{listing[2]}?q=alarm&amp;sort=instruction"' in html
    assert f'id="position">2 / {len(listing)}' in html


def test_unknown_episode_page_parameter_is_422(rclient, research):
    assert rclient.get(f"/episodes/{research['tree'].episode_id}", params={"step": "3"}).status_code == 422


def test_steps_equal_steps_resolved_with_or_without_annotations(client, shared_lake):
    import json

    for episode_id in shared_lake.column_values("episodes", "episode_id"):
        steps = client.get(f"/api/episodes/{episode_id}").json()["steps"]
        rows = shared_lake.sql("SELECT recorded_action_json, action_json, corrected, step_correct FROM steps_resolved "
                               "WHERE episode_id = ? ORDER BY step_index", [episode_id]).to_pylist()
        assert [s["action"] for s in steps] == [json.loads(r["recorded_action_json"]) for r in rows]
        assert [s["correction"] for s in steps] == [json.loads(r["action_json"]) if r["corrected"] else None
                                                    for r in rows]
        assert [s["step_correct"] for s in steps] == [r["step_correct"] for r in rows]


def test_a_rollouts_steps_show_when_the_policy_was_asked_and_how_long_it_took(tmp_path):
    """A real rollout (worker process, loopback OpenAI-compatible endpoint) -> lake -> page."""
    import json

    from fastapi.testclient import TestClient

    from api.app import create_app
    from datalake.lake import Lake
    from rollout.policies import PolicyOptions
    from rollout.runner import rollout
    from rollout.spec import RolloutSpec
    from tests.api.conftest import settings
    from tests.rollout.chat_server import ChatServer

    lake = Lake.init(tmp_path / "lake")
    with ChatServer(lambda body: "not an action at all") as server:
        report = rollout(lake.uri, RolloutSpec(policy=server.url, tasks="SettingsWifiOn", phones="mock:1",
                                               max_steps=3, options=PolicyOptions(timeout=5, retries=0)))
    assert report.episodes == 1 and report.invalid_steps == 3
    client = TestClient(create_app(Lake.open(lake.uri), settings()))
    (item,) = client.get("/api/episodes").json()["items"]
    steps = client.get(f"/api/episodes/{item['episode_id']}").json()["steps"]
    asked = [s["meta"]["t_ms"] for s in steps]
    assert asked[0] == 0 and asked == sorted(asked) and len(set(asked)) == 3
    assert all(s["meta"]["policy_ms"] >= 0 for s in steps)
    html = client.get(f"/episodes/{item['episode_id']}").text
    sections = re.split(r'<section class="step"', html)[1:]
    for step, section in zip(steps, sections, strict=True):
        timing = re.search(r'<dd class="timing">(.*?)</dd>', section).group(1)
        assert f"policy answered in <code>{step['meta']['policy_ms']:g} ms</code>" in timing
        assert f"asked at <code>+{step['meta']['t_ms'] / 1000:.2f} s</code>" in timing
        assert "policy_ms" not in section.split('class="timing"')[1]  # not repeated as a raw fact
    assert 'id="recorded-at"' in html and json.dumps(item["created_at"])[1:11] in html


def test_steps_without_timing_say_so(rclient, research):
    html = rclient.get(f"/episodes/{research['tree'].episode_id}").text
    assert html.count('<dd class="timing"><span class="muted">no timing recorded</span></dd>') == 2


@pytest.mark.parametrize("path", ["/episodes/{long}", "/evals/{long}", "/datasets/{long}/v1",
                                  "/datasets/{long}/v1/card", "/datasets/{long}/diff?a=1&b=2"])
def test_pages_refuse_an_oversized_id_without_echoing_it(rclient, path):
    long = "x" * 5000
    r = rclient.get(path.format(long=long))
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "x" * 201 not in r.text and "at most 200 characters" in r.text
