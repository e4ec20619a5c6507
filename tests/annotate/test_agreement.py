import json
import uuid

from typer.testing import CliRunner

from collections import Counter

import pytest

from annotate.agreement import agreement, cohen_kappa, fleiss_kappa
from datalake import schema as S
from phoneloop.cli import app
from tests.factory import episode

EP = episode(seed=31, n_steps=3)


def row(annotator, step_index=0, action=None, correct=None, outcome=None, lead_time=None):
    return {"lead_time": lead_time, "annotation_id": str(uuid.uuid4()), "target": "episode" if outcome else "step",
            "episode_id": EP.episode_id, "step_index": None if outcome else step_index, "status": "accepted",
            "action_json": json.dumps(action) if action else None, "step_correct": correct, "outcome": outcome,
            "note": None, "annotator": annotator, "created_at": S.now(),
            "origin": f"label-studio:1/{'e' if outcome else step_index}/{annotator}"}  # one annotation per person


def test_agreement_compares_annotators_pairwise(lake):
    lake.write_episodes([EP])
    lake.append("annotations", [
        row("a", 0, {"type": "tap", "x": 10, "y": 10}, correct=False),
        row("b", 0, {"type": "tap", "x": 15, "y": 18}, correct=False),  # 9.4 px away: agrees at 14 px
        row("a", 1, {"type": "tap", "x": 10, "y": 10}, correct=True),
        row("b", 1, {"type": "long_press", "x": 10, "y": 10}, correct=False),
        row("a", 2, correct=True),  # one annotator only: not compared
        row("a", outcome="success"), row("b", outcome="failure"),
    ])
    report = agreement(lake, tolerance_px=14)
    assert report["annotators"] == 2
    steps = report["steps"]
    assert steps["items"] == 2
    assert steps["step_correct"]["pairs"] == 2 and steps["step_correct"]["agreement"] == 0.5
    assert steps["action"] == {"pairs": 2, "agreement": 0.5}
    assert steps["action_type"] == {"pairs": 2, "agreement": 0.5, "cohen_kappa": 0.0, "fleiss_kappa": -0.3333}
    assert steps["tap_distance_px"] == {"pairs": 1, "p50": 9.4, "p90": 9.4, "max": 9.4, "within_tolerance": 1.0}
    assert steps["text"] == {"pairs": 0, "agreement": None}
    assert report["episodes"]["items"] == 1 and report["episodes"]["outcome"]["agreement"] == 0.0
    assert [(d["target"], d["step_index"]) for d in report["disagreements"]] == [("episode", None), ("step", 1)]
    assert agreement(lake, tolerance_px=5)["steps"]["action"]["agreement"] == 0.0


def test_each_annotators_latest_annotation_counts(lake):
    lake.write_episodes([EP])
    lake.append("annotations", [row("a", correct=False), row("b", correct=True)])
    lake.append("annotations", [row("a", correct=True)])
    assert agreement(lake)["steps"]["step_correct"] == {"pairs": 1, "agreement": 1.0, "cohen_kappa": None,
                                                        "fleiss_kappa": None}


def test_agreement_cli_on_an_empty_lake(lake):
    result = CliRunner().invoke(app, ["annotate", "agreement", "--lake", lake.uri, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["steps"]["action"] == {"pairs": 0, "agreement": None}


def test_cohen_kappa_matches_the_textbook_example():
    # Cohen (1960) style 2x2 table, 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> kappa 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None  # chance agreement is total: undefined


def test_fleiss_kappa_matches_fleiss_1971_worked_example():
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    counts = [Counter({j: n for j, n in enumerate(r) if n}) for r in table]
    assert fleiss_kappa(counts) == pytest.approx(0.210, abs=5e-4)


def test_per_annotator_statistics_and_text_agreement(lake):
    lake.write_episodes([EP])
    lake.append("annotations", [
        row("a", 0, {"type": "input_text", "text": "Hello  world"}, lead_time=4.0),
        row("b", 0, {"type": "input_text", "text": "hello world"}, lead_time=10.0),
        row("c", 0, {"type": "tap", "x": 5, "y": 5}, lead_time=2.0),
        row("a", 1, {"type": "input_text", "text": "abc"}, lead_time=6.0),
        row("b", 1, {"type": "input_text", "text": "abd"}),
    ])
    report = agreement(lake)
    assert report["steps"]["text"] == {"pairs": 2, "agreement": 0.5}
    stats = {s["annotator"]: s for s in report["per_annotator"]}
    assert stats["a"] == {"annotator": "a", "annotations": 2, "shared_items": 2, "agreement_with_consensus": 1.0,
                          "median_lead_time_s": 5.0}
    assert stats["c"]["agreement_with_consensus"] == 0.0 and stats["b"]["median_lead_time_s"] == 10.0
