"""Evaluations: the list, one evaluation's table and per-task results, two policies compared."""

import json
import re

from api.evals import summarise, wilson
from tests.api.conftest import EVAL_ID


def test_eval_list_has_each_policy_with_its_counts(rclient):
    [ev] = rclient.get("/api/evals").json()
    assert ev["eval_id"] == EVAL_ID and ev["name"] == "round 1: SFT vs random"
    assert {p["policy"]: (p["successes"], p["episodes"]) for p in ev["policies"]} == {"sft-r1": (3, 4),
                                                                                      "random:0": (1, 4)}


def test_eval_detail_table_holds_the_stored_summary(rclient, research):
    body = rclient.get(f"/api/evals/{EVAL_ID}").json()
    stored = {r["policy"]: json.loads(r["summary_json"]) for r in research["rows"]}
    cells = {(row["by"], row["group"]): row["cells"] for row in body["table"]}
    for policy, summary in stored.items():
        assert cells[("all", "overall")][policy] == summary["overall"]
        for app, cell in summary["by_app"].items():
            assert cells[("app", app)][policy] == cell
    clock = next(t for t in body["tasks"] if t["task"] == "ClockAddAlarm")
    assert [e["episode_id"] for e in clock["by_policy"]["sft-r1"]["episodes"]] == [
        research["ids"][("sft-r1", "ClockAddAlarm", 1)], research["ids"][("sft-r1", "ClockAddAlarm", 2)]]


def test_eval_page_shows_the_stored_numbers_and_links_every_episode(rclient, research):
    html = rclient.get(f"/evals/{EVAL_ID}").text
    for row in research["rows"]:
        overall = json.loads(row["summary_json"])["overall"]
        assert f'data-n="{overall["n"]}" data-successes="{overall["successes"]}"' in html
    assert "[1.2%, 98.8%]" in html and "[4.6%, 95.4%]" in html  # the stored intervals, not recomputed ones
    for episode_id in research["ids"].values():
        assert f'href="/episodes/{episode_id}?eval_id={EVAL_ID}"' in html
    assert len(re.findall(r"<rect x=", html)) == 2 * 4  # a bar per policy and group (category, 2 apps, overall)
    assert 'id="comparisons"' in html


def test_compare_pairs_the_same_task_seeds(rclient, research):
    body = rclient.get("/api/evals/compare", params={"left": EVAL_ID, "left_policy": "sft-r1", "right": EVAL_ID,
                                                     "right_policy": "random:0"}).json()
    assert body["counts"] == {"both": 1, "only_left": 2, "only_right": 0, "neither": 1}
    assert {t["task"]: (t["left"], t["right"]) for t in body["tasks"]} == {"ClockAddAlarm": (1, 0),
                                                                          "NotesCreate": (2, 1)}
    first = body["pairs"][0]
    assert first["left"]["episode_id"] == research["ids"][("sft-r1", first["task"], first["seed"])]
    assert first["right"]["episode_id"] == research["ids"][("random:0", first["task"], first["seed"])]


def test_compare_page_shows_both_episodes_of_a_chosen_seed_side_by_side(rclient, research):
    html = rclient.get("/evals/compare", params={"left": EVAL_ID, "left_policy": "sft-r1", "right": EVAL_ID,
                                                 "right_policy": "random:0", "task": "ClockAddAlarm", "seed": "1"}).text
    for policy in ("sft-r1", "random:0"):
        assert f'src="/episodes/{research["ids"][(policy, "ClockAddAlarm", 1)]}?embed=true"' in html
    embedded = rclient.get(f"/episodes/{research['ids'][('sft-r1', 'ClockAddAlarm', 1)]}", params={"embed": "true"})
    assert embedded.status_code == 200 and "<nav>" not in embedded.text


def test_unknown_eval_and_policy_are_404(rclient):
    assert rclient.get("/api/evals/nope").status_code == 404
    assert rclient.get("/evals/nope").status_code == 404
    r = rclient.get("/api/evals/compare", params={"left": EVAL_ID, "left_policy": "sft-r1", "right": EVAL_ID,
                                                  "right_policy": "gpt-9"})
    assert r.status_code == 404 and "gpt-9" in r.json()["detail"]


def test_summary_is_computed_from_results_when_the_row_has_none(rclient, fresh_lake, fresh_client, research):
    row = {**research["rows"][0], "eval_id": "nosummary", "summary_json": None}
    fresh_lake.append("evals", [row])
    body = fresh_client.get("/api/evals/nosummary").json()
    results = json.loads(row["results_json"])
    assert body["rows"][0]["summary_computed"] is True
    assert body["rows"][0]["summary"] == summarise(results)
    low, high = wilson(3, 4)
    assert body["rows"][0]["summary"]["overall"] == {"n": 4, "successes": 3, "rate": 0.75, "low": low, "high": high}
    assert 0.3 < low < 0.75 < high < 1.0


def test_two_evaluations_compare_on_the_seeds_both_ran(fresh_lake, fresh_client, research):
    """A later round's evaluation against an earlier one: the evals page offers it, pairs are per seed."""
    rows = [dict(r) for r in research["rows"] if r["policy"] == "sft-r1"]
    later = dict(rows[0], eval_id="eval00000002", policy="grpo-r2", name="round 2")
    results = json.loads(later["results_json"])
    for r in results:
        r["outcome"] = "success"  # GRPO solves every seed SFT ran, seed 2 of ClockAddAlarm too
    later["results_json"] = json.dumps(results[:3])  # and ran one seed fewer
    fresh_lake.append("evals", [*rows, later])
    html = fresh_client.get("/evals").text
    form = html.split('id="compare-any"')[1].split("</form>")[0]
    for eval_id in (EVAL_ID, "eval00000002"):
        assert f'<option value="{eval_id}">' in form
    assert ">grpo-r2</option>" in form and ">sft-r1</option>" in form
    body = fresh_client.get("/api/evals/compare", params={"left": EVAL_ID, "left_policy": "sft-r1",
                                                          "right": "eval00000002", "right_policy": "grpo-r2"}).json()
    assert len(body["pairs"]) == 3
    assert body["counts"] == {"both": 2, "only_left": 0, "only_right": 1, "neither": 0}
    page = fresh_client.get("/evals/compare", params={"left": EVAL_ID, "left_policy": "sft-r1",
                                                      "right": "eval00000002", "right_policy": "grpo-r2"})
    assert page.status_code == 200 and "grpo-r2" in page.text
