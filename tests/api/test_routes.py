import pytest

from tests.api.conftest import gestures_episode


def test_health_names_the_lake_without_its_path(client, shared_lake):
    r = client.get("/health")
    assert r.status_code == 200 and r.json() == {"status": "ok", "lake": "lake", "schema_version": 4}
    assert shared_lake.uri not in r.text


def test_episode_list_counts_everything(client):
    body = client.get("/api/episodes").json()
    assert body["total"] == 7 and len(body["items"]) == 7
    assert {e["source"] for e in body["items"]} == {"oracle", "human", "agent", "rollout"}


@pytest.mark.parametrize("query, expected", [
    ({"source": "oracle"}, 2), ({"app": "shop"}, 2), ({"outcome": "failure"}, 3),
    ({"category": "single-app", "app": "demo"}, 1), ({"round": 2}, 1), ({"policy": "p1"}, 1),
    ({"app": "nobody"}, 0),
])
def test_episode_list_filters_by_exact_match(client, query, expected):
    body = client.get("/api/episodes", params=query).json()
    assert body["total"] == expected == len(body["items"])
    for item in body["items"]:
        assert all(item[k] == v for k, v in query.items())


def test_episode_list_pages_without_overlap(client):
    first = client.get("/api/episodes", params={"limit": 4}).json()
    second = client.get("/api/episodes", params={"limit": 4, "offset": 4}).json()
    ids = [e["episode_id"] for e in first["items"] + second["items"]]
    assert len(first["items"]) == 4 and len(second["items"]) == 3 and len(set(ids)) == 7


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"round": "x"}])
def test_episode_list_rejects_bad_paging(client, query):
    assert client.get("/api/episodes", params=query).status_code == 422


def test_episode_detail_has_steps_actions_correction_and_outcome(client):
    episode = gestures_episode()
    body = client.get(f"/api/episodes/{episode.episode_id}").json()
    assert body["outcome"] == "failure" and body["verified_by"] == "judge"
    assert [s["action"]["type"] for s in body["steps"]] == [s.action.type for s in episode.steps]
    first = body["steps"][0]
    assert first["action"]["element"]["bounds"] == [10, 20, 60, 50]
    assert first["correction"] == {"type": "tap", "x": 80, "y": 150}
    assert first["step_correct"] is False and first["corrected"] is True
    assert body["steps"][1]["correction"] is None
    assert first["frame_url"] == f"/frames/{episode.steps[0].observation.sha256}.png"
    assert [a["step_index"] for a in body["annotations"]] == [0]


def test_unknown_episode_is_404(client):
    r = client.get("/api/episodes/no-such-episode")
    assert r.status_code == 404 and "no-such-episode" in r.json()["detail"]


def test_datasets_and_models_are_listed_with_decoded_json(client):
    datasets = client.get("/api/datasets").json()
    assert [(d["name"], d["version"]) for d in datasets] == [("sft-mix", 1), ("sft-mix", 2)]
    assert datasets[0]["counts"]["steps"] == 20 and datasets[0]["exports"]["report"] == "report.html"
    models = client.get("/api/models").json()
    assert models[0]["name"] == "tiny-sft" and models[0]["metrics"] == {"success_rate": 0.5}


def test_empty_lake_lists_nothing(fresh_client):
    assert fresh_client.get("/api/datasets").json() == []
    assert fresh_client.get("/api/models").json() == []


def test_openapi_documents_every_json_route(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/health", "/api/episodes", "/api/episodes/{episode_id}", "/frames/{sha}.png", "/api/datasets",
            "/api/models", "/api/sql", "/webhooks/label-studio"} <= set(paths)
    assert client.get("/docs").status_code == 200


def test_new_episodes_written_by_another_process_appear(fresh_client, fresh_lake):
    from datalake.lake import Lake
    from tests.factory import episode

    before = fresh_client.get("/api/episodes").json()["total"]
    Lake.open(fresh_lake.uri).write_episodes([episode(seed=77)])
    assert fresh_client.get("/api/episodes").json()["total"] == before + 1


def test_concurrent_reads_on_a_real_server_all_succeed(live_server):
    import http.client
    import json
    from concurrent.futures import ThreadPoolExecutor
    from urllib.parse import urlsplit

    host, port = urlsplit(live_server).hostname, urlsplit(live_server).port
    paths = ["/api/episodes?limit=3", f"/api/episodes/{gestures_episode().episode_id}", "/api/datasets",
             f"/frames/{gestures_episode().steps[1].observation.sha256}.png", "/episodes"]

    def fetch(i: int) -> int:
        conn = http.client.HTTPConnection(host, port, timeout=10)
        conn.request("GET", paths[i % len(paths)])
        response = conn.getresponse()
        body = response.read()
        if paths[i % len(paths)].startswith("/api/episodes?"):
            assert json.loads(body)["total"] == 7
        return response.status

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(fetch, range(60))) == {200}
