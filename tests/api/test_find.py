"""Lists that find things: word search, exact filters, facet counts, sorting, 422 on what is not a filter."""

import re

import pytest

from tests.api.conftest import EVAL_ID, ROLLOUT_ID


def ids(body) -> list[str]:
    return [e["episode_id"] for e in body["items"]]


def test_unknown_filter_is_422_naming_the_parameter(rclient):
    r = rclient.get("/api/episodes", params={"colour": "red"})
    assert r.status_code == 422
    [error] = r.json()["detail"]
    assert error["loc"] == ["query", "colour"] and "unknown parameter 'colour'" in error["msg"]
    assert "red" not in r.text  # the value is not echoed


def test_unknown_filter_on_the_page_is_an_html_422(rclient):
    r = rclient.get("/episodes", params={"tsak": "ClockAddAlarm"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "unknown parameter &#39;tsak&#39;" in r.text or "unknown parameter 'tsak'" in r.text


@pytest.mark.parametrize("name, value", [("outcome", "maybe"), ("round", "-1"), ("sort", "random"),
                                         ("source", "robot"), ("limit", "0"), ("q", "x" * 201)])
def test_bad_values_are_422_naming_the_parameter(rclient, name, value):
    r = rclient.get("/api/episodes", params={name: value})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", name]
    assert rclient.get("/episodes", params={name: value}).status_code == 422 or name == "limit"


def test_task_filter_selects_only_that_task(rclient, research_lake):
    body = rclient.get("/api/episodes", params={"task": "ClockAddAlarm", "limit": 500}).json()
    expected = research_lake.sql("SELECT count(*) FROM episodes WHERE task = 'ClockAddAlarm'").column(0)[0].as_py()
    assert body["total"] == expected == len(body["items"]) >= 5
    assert {e["task"] for e in body["items"]} == {"ClockAddAlarm"}


def test_search_finds_an_episode_by_a_word_of_its_instruction(rclient, research):
    body = rclient.get("/api/episodes", params={"q": "DIALOG"}).json()
    assert ids(body) == [research["tree"].episode_id]
    assert rclient.get("/api/episodes", params={"q": "confirm dialog"}).json()["total"] == 1
    assert rclient.get("/api/episodes", params={"q": "confirm wifi"}).json()["total"] == 0  # every word must occur
    assert rclient.get("/api/episodes", params={"q": "%_"}).json()["total"] == 0  # no LIKE wildcards: no word


def test_search_and_filters_combine(rclient, research):
    body = rclient.get("/api/episodes", params={"q": "alarm", "policy": "sft-r1", "limit": 500}).json()
    assert body["total"] == 3  # the rollout and two eval episodes of sft-r1 on ClockAddAlarm
    assert all("alarm" in e["instruction"].lower() and e["policy"] == "sft-r1" for e in body["items"])


def test_filters_by_run_ids_stop_reason_and_perturbation(rclient, research):
    rollout = research["rollout"].episode_id
    assert ids(rclient.get("/api/episodes", params={"rollout_id": ROLLOUT_ID}).json()) == [rollout]
    assert ids(rclient.get("/api/episodes", params={"stop": "max_steps"}).json()) == [rollout]
    assert ids(rclient.get("/api/episodes", params={"perturbation": "light"}).json()) == [rollout]
    assert rclient.get("/api/episodes", params={"eval_id": EVAL_ID}).json()["total"] == 9
    assert rclient.get("/api/episodes", params={"purpose": "eval", "limit": 500}).json()["total"] == 8


def test_facet_counts_equal_the_lake(rclient, research_lake):
    body = rclient.get("/api/episodes", params={"source": "rollout"}).json()
    facets = {f: {v["value"]: v["n"] for v in values} for f, values in body["facets"].items()}
    for column in ("task", "policy", "outcome", "app"):
        rows = research_lake.sql(f"SELECT {column}::VARCHAR AS v, count(*) AS n FROM episodes_resolved "
                                 f"WHERE source = 'rollout' AND {column} IS NOT NULL GROUP BY 1").to_pylist()
        assert facets[column] == {r["v"]: r["n"] for r in rows}
    assert sum(facets["stop"].values()) == body["total"]


def test_outcome_in_lists_is_the_human_judgement(fresh_client, fresh_lake):
    from tests.api.conftest import gestures_episode
    from datalake import schema as S

    gid = gestures_episode().episode_id
    [before] = fresh_client.get("/api/episodes", params={"q": "gestures"}).json()["items"]
    assert (before["outcome"], before["verified_by"]) == ("failure", "judge")  # the listing is built now
    fresh_lake.append("annotations", [{"annotation_id": "judge-1", "target": "episode", "episode_id": gid,
                                       "step_index": None, "status": "accepted", "action_json": None,
                                       "step_correct": None, "outcome": "success", "note": None,
                                       "annotator": "ann@example.com", "origin": "test", "created_at": S.now()}])
    [item] = fresh_client.get("/api/episodes", params={"q": "gestures"}).json()["items"]
    assert (item["outcome"], item["verified_by"], item["recorded_outcome"]) == ("success", "human", "failure")
    assert fresh_client.get("/api/episodes", params={"verified_by": "human", "q": "gestures"}).json()["total"] == 1


@pytest.mark.parametrize("sort, key, reverse", [("steps", "num_steps", True), ("fewest-steps", "num_steps", False),
                                                ("instruction", "instruction", False)])
def test_sorting_orders_the_whole_listing(rclient, sort, key, reverse):
    items = rclient.get("/api/episodes", params={"sort": sort, "limit": 500}).json()["items"]
    values = [e[key] for e in items]
    assert values == sorted(values, reverse=reverse) and len(set(values)) > 1


def test_neighbours_walk_the_listing_in_order(rclient):
    query = {"q": "alarm", "sort": "instruction"}
    listing = ids(rclient.get("/api/episodes", params={**query, "limit": 500}).json())
    walked, current = [], listing[0]
    while current:
        walked.append(current)
        step = rclient.get(f"/api/episodes/{current}/neighbours", params=query).json()
        assert step["pos"] == len(walked) and step["total"] == len(listing)
        current = step["next"]
    assert walked == listing
    assert rclient.get(f"/api/episodes/{listing[0]}/neighbours", params=query).json()["prev"] is None


def test_page_lists_facets_with_counts_and_keeps_the_filter_in_links(rclient):
    html = rclient.get("/episodes", params={"q": "alarm", "task": "ClockAddAlarm"}).text
    assert '<option value="ClockAddAlarm" selected>ClockAddAlarm (5)</option>' in html
    assert 'name="q" value="alarm"' in html
    assert len(re.findall(r'href="/episodes/[^"?]+\?q=alarm&amp;task=ClockAddAlarm"', html)) == 5  # each episode
    assert 'href="/episodes.csv?q=alarm&amp;task=ClockAddAlarm"' in html  # and the export of this list


@pytest.mark.parametrize("path", ["/api/datasets", "/api/models", "/api/evals", "/datasets", "/evals",
                                  f"/api/evals/{EVAL_ID}", "/datasets/sft-mix/v1"])
def test_every_route_refuses_parameters_it_does_not_take(rclient, path):
    r = rclient.get(path, params={"sortby": "name"})
    assert r.status_code == 422 and "sortby" in r.text
    assert rclient.get(path).status_code == 200
