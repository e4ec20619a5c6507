"""Offline docs, errors without paths or echoed input, SQL memory limit and concurrency cap, datasets."""

import threading
import time

from fastapi.testclient import TestClient

from api.app import create_app
from datalake.lake import Lake
from tests.api.conftest import AUTH, settings


def test_docs_and_redoc_load_their_assets_from_this_server(client):
    for page, assets in (("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")), ("/redoc", ("redoc.standalone.js",))):
        html = client.get(page).text
        assert "cdn" not in html.lower() and "https://" not in html and "fonts.googleapis" not in html
        for asset in assets:
            assert f'/static-docs/{asset}"' in html
            r = client.get(f"/static-docs/{asset}")
            assert r.status_code == 200 and len(r.content) > 100_000


def test_errors_never_show_the_lake_path(client, shared_lake):
    for path in ("/api/episodes/nope", "/episodes/nope", "/api/datasets/diff?name=x&a=1&b=2",
                 "/datasets/sft-mix/v9", f"/frames/{'0' * 64}.png", "/health"):
        r = client.get(path)
        assert shared_lake.uri not in r.text, path


def test_oversized_input_is_not_echoed(client):
    huge = "a" * 60_000  # near the test client's URL limit; the real server is tried below
    for path in (f"/frames/{huge}.png", f"/api/episodes/{huge}", f"/episodes?{huge}=1", f"/api/episodes?q={huge}",
                 f"/api/episodes/x/steps/{huge}/tree"):
        r = client.get(path)
        assert 400 <= r.status_code < 500 and len(r.content) < 3000, path
        assert "a" * 200 not in r.text


def test_a_100k_character_frame_name_is_refused_without_echo(live_server):
    import http.client
    from urllib.parse import urlsplit

    conn = http.client.HTTPConnection(urlsplit(live_server).hostname, urlsplit(live_server).port, timeout=10)
    conn.request("GET", f"/frames/{'b' * 100_000}.png")
    response = conn.getresponse()
    body = response.read()
    assert 400 <= response.status < 500 and len(body) < 3000 and b"b" * 200 not in body


def test_a_query_over_its_memory_limit_fails_clearly(shared_lake):
    app = create_app(Lake.open(shared_lake.uri), settings(sql_memory_mb=32))
    r = TestClient(app).post("/api/sql", headers=AUTH, json={
        "query": "SELECT list(i::VARCHAR || 'xxxxxxxxxxxxxxxxxxxx') FROM range(20000000) t(i)"})
    assert r.status_code == 400 and "memory" in r.json()["detail"]
    ok = TestClient(app).post("/api/sql", headers=AUTH, json={"query": "SELECT count(*) AS n FROM episodes"})
    assert ok.status_code == 200 and ok.json()["rows"] == [[7]]


def test_queries_beyond_the_cap_are_told_to_retry(shared_lake):
    app = create_app(Lake.open(shared_lake.uri), settings(sql_max_concurrent=1, sql_timeout_s=3))
    client = TestClient(app)
    slow = {"query": "SELECT count(*) FROM range(1000000000000) a(i) WHERE i % 7 = 3"}
    results = []
    worker = threading.Thread(target=lambda: results.append(client.post("/api/sql", headers=AUTH, json=slow)))
    worker.start()
    gate = app.state.sql_gate
    while gate._slots._value != 0 and worker.is_alive():  # wait until the slow query holds the only slot
        time.sleep(0.01)
    r = client.post("/api/sql", headers=AUTH, json={"query": "SELECT 1"})
    assert r.status_code == 429 and "retry" in r.json()["detail"]
    worker.join(60)
    assert results[0].status_code == 408  # the slow one hit its timeout; the slot is free again
    assert client.post("/api/sql", headers=AUTH, json={"query": "SELECT 1 AS one"}).json()["rows"] == [[1]]


def test_dataset_page_lists_its_episodes_and_links_the_card(rclient, research):
    ids = list(research["ids"].values())
    html = rclient.get("/datasets/sft-mix/v1").text
    assert 'id="card" href="/datasets/sft-mix/v1/card"' in html
    for i in ids[:6]:
        assert f'href="/episodes/{i}"' in html
    assert f'href="/episodes/{ids[7]}"' not in html
    card = rclient.get("/datasets/sft-mix/v1/card")
    assert card.status_code == 200 and "A card." in card.text and card.headers["content-type"].startswith("text/plain")
    assert 'href="/datasets/sft-mix/diff?a=1&amp;b=2"' in html


def test_dataset_diff_names_added_and_removed_episodes(rclient, research):
    ids = list(research["ids"].values())
    body = rclient.get("/api/datasets/diff", params={"name": "sft-mix", "a": 1, "b": 2}).json()
    assert body["episodes_added"] == sorted(set(ids[1:8]) - set(ids[:6]))
    assert body["episodes_removed"] == [ids[0]]
    assert "-max_steps: 20" in body["recipe_diff"] and "+max_steps: 40" in body["recipe_diff"]
    html = rclient.get("/datasets/sft-mix/diff", params={"a": 1, "b": 2}).text
    assert f"removed: 1 <a href=\"/episodes/{ids[0]}\">" in html


def test_dataset_exports_outside_the_version_folder_are_not_read(fresh_lake, fresh_client, tmp_path):
    import json

    from tests.api.conftest import dataset_row, export_folder

    outside = export_folder(tmp_path / "elsewhere", {"train": ["secret-episode"]})
    folder = tmp_path / "ds" / "v1"
    folder.mkdir(parents=True)
    row = dataset_row(folder=str(folder))
    row["exports_json"] = json.dumps({"path": str(folder), "formats": {"sft": {"train": {
        "files": ["../../elsewhere/sft/train-0.parquet", str(outside / "sft" / "train-0.parquet")]}}}})
    fresh_lake.append("datasets", [row])
    html = fresh_client.get("/datasets/sft-mix/v1").text
    assert "secret-episode"[:12] not in html


def test_dataset_version_json_route_lists_its_episodes_by_split(rclient, research):
    ids = list(research["ids"].values())
    body = rclient.get("/api/datasets/sft-mix/v2").json()
    assert {s: sorted(v) for s, v in body["episodes"].items()} == {"train": sorted(ids[1:5]), "val": sorted(ids[5:8])}
    assert body["version"] == 2 and body["exports"]["card"] == "README.md"
    assert rclient.get("/api/datasets/sft-mix/v7").status_code == 404
