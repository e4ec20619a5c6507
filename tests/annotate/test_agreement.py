import json
import uuid

from typer.testing import CliRunner

from annotate.agreement import agreement
from datalake import schema as S
from phoneloop.cli import app
from tests.factory import episode

EP = episode(seed=31, n_steps=3)


def row(annotator, step_index=0, action=None, correct=None, outcome=None):
    return {"annotation_id": str(uuid.uuid4()), "target": "episode" if outcome else "step",
            "episode_id": EP.episode_id, "step_index": None if outcome else step_index, "status": "accepted",
            "action_json": json.dumps(action) if action else None, "step_correct": correct, "outcome": outcome,
            "note": None, "annotator": annotator, "origin": "label-studio:1/1/1", "created_at": S.now()}


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
    assert report["steps"] == {"items": 2, "step_correct": {"pairs": 2, "agreement": 0.5},
                               "action": {"pairs": 2, "agreement": 0.5}}
    assert report["episodes"] == {"items": 1, "outcome": {"pairs": 1, "agreement": 0.0}}
    assert [(d["target"], d["step_index"]) for d in report["disagreements"]] == [("episode", None), ("step", 1)]
    assert agreement(lake, tolerance_px=5)["steps"]["action"]["agreement"] == 0.0


def test_each_annotators_latest_annotation_counts(lake):
    lake.write_episodes([EP])
    lake.append("annotations", [row("a", correct=False), row("b", correct=True)])
    lake.append("annotations", [row("a", correct=True)])
    assert agreement(lake)["steps"]["step_correct"] == {"pairs": 1, "agreement": 1.0}


def test_agreement_cli_on_an_empty_lake(lake):
    result = CliRunner().invoke(app, ["annotate", "agreement", "--lake", lake.uri, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["steps"]["action"] == {"pairs": 0, "agreement": None}
