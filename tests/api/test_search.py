"""Search that finds what the model said: ranked full-text search over instructions, model
output, UI text and annotation notes, in English and Chinese (api/search.py)."""

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.search import SearchIndex, words
from datalake import schema as S
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step
from tests.api.conftest import build_lake, settings
from tests.factory import H, W, png, ui_tree


def said(text: str, seed: int, instruction: str = "Turn on the flashlight", screen: str = "OK") -> Episode:
    steps = (Step(Observation(png(700 + seed), ui_tree=ui_tree(screen), package="com.example"),
                  Action("tap", x=30, y=35), raw_output=text, thought="the toggle is at the top"),
             Step(Observation(png(750 + seed)), Action("terminate", status="success")))
    return Episode(instruction=instruction, source="rollout", device=Device(W, H), steps=steps, app="demo",
                   outcome="failure", verified_by="verifier", policy="sft-r1")


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = build_lake(tmp_path_factory.mktemp("search") / "lake")
    lake.write_episodes([
        said("I will press the periwinkle switch twice", 1),
        said('{"type": "tap", "x": 30, "y": 35}', 2, screen="Quarterly Report"),
        said("tap", 3, instruction="打开设置并开启无线网络"),
        said("tap", 4, instruction="给张伟发短信说明天见"),
        said("periwinkle periwinkle periwinkle: the periwinkle button", 5, instruction="Press the periwinkle button"),
    ])
    return lake


@pytest.fixture(scope="module")
def client(lake):
    return TestClient(create_app(Lake.open(lake.uri), settings()))


def found(client, q, **params):
    body = client.get("/api/episodes", params={"q": q, "limit": 500, **params}).json()
    return [e["instruction"] for e in body["items"]]


def test_words_only_in_the_models_raw_output_find_the_episode(client):
    assert found(client, "periwinkle switch") == ["Turn on the flashlight"]  # neither word is in an instruction


def test_matches_rank_by_bm25(client):
    assert found(client, "periwinkle") == ["Press the periwinkle button", "Turn on the flashlight"]


def test_ui_text_of_a_screen_is_searchable(client):
    assert found(client, "quarterly report") == ["Turn on the flashlight"]


@pytest.mark.parametrize("q, instruction", [("无线网络", "打开设置并开启无线网络"), ("设置", "打开设置并开启无线网络"),
                                            ("短信", "给张伟发短信说明天见"), ("张伟 明天", "给张伟发短信说明天见")])
def test_a_chinese_query_finds_a_chinese_instruction(client, q, instruction):
    assert found(client, q) == [instruction]


def test_an_annotation_note_is_searchable_once_written(lake):
    client = TestClient(create_app(Lake.open(lake.uri), settings()))
    assert found(client, "mauve") == []
    target = said("tap", 2, screen="Quarterly Report").episode_id
    lake.append("annotations", [{"annotation_id": "note-1", "target": "episode", "episode_id": target,
                                 "step_index": None, "status": "accepted", "action_json": None, "step_correct": None,
                                 "outcome": None, "note": "a mauve ad covered the button", "annotator": "ann@x.org",
                                 "origin": "test", "created_at": S.now()}])
    assert found(client, "mauve ad") == ["Turn on the flashlight"]


def test_search_combines_with_filters_and_an_explicit_sort(client):
    assert found(client, "periwinkle", app="demo", sort="instruction") == ["Press the periwinkle button",
                                                                           "Turn on the flashlight"]
    assert found(client, "periwinkle", policy="nobody") == []


def test_the_index_adds_only_new_episodes_and_requires_every_word():
    index = SearchIndex()
    assert index.add([("a", "open the wifi settings"), ("b", "tap the blue OK button")]) == 2
    assert index.add([("a", "something else"), ("c", "打开无线网络")]) == 1
    assert index.search("blue button")[0] == ["b"] and index.search("blue wifi")[0] == []
    assert index.search("无线网络")[0] == ["c"] and words("无线网络") == words("无线网络")


def test_a_search_listings_total_and_facets_count_exactly_the_matching_episodes(client, lake):
    """The count and facets with ``q`` (numpy over the hits, api/hits.py) against the lake's own rows."""
    rows = Lake.open(lake.uri).sql("SELECT episode_id, source, app, outcome FROM episodes_resolved").to_pylist()
    body = client.get("/api/episodes", params={"q": "tap", "limit": 500}).json()
    ids = {e["episode_id"] for e in body["items"]}
    assert body["total"] == len(ids) >= 3  # said() 2, 3 and 4 output "tap"
    mine = [r for r in rows if r["episode_id"] in ids]
    for facet in ("source", "app", "outcome"):
        expected = {}
        for r in mine:
            if r[facet] is not None:
                expected[r[facet]] = expected.get(r[facet], 0) + 1
        assert {v["value"]: v["n"] for v in body["facets"][facet]} == expected, facet
    narrowed = client.get("/api/episodes", params={"q": "tap", "app": "demo", "limit": 500}).json()
    demo = {r["episode_id"] for r in mine if r["app"] == "demo"}
    assert narrowed["total"] == len(demo) and {e["episode_id"] for e in narrowed["items"]} == demo
    assert narrowed["facets"]["app"] == [{"value": "demo", "n": len(demo)}]
    nothing = client.get("/api/episodes", params={"q": "zzz-nothing-here"}).json()
    assert nothing["total"] == 0 and nothing["items"] == [] and all(v == [] for v in nothing["facets"].values())
