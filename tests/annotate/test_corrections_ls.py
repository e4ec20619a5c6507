"""A failed rollout corrected by a person in the real Label Studio (logged in through its form, not
admin with completed_by=) becomes a verified corrected episode with lineage to the annotation."""

import pytest

from annotate import pull, push
from datalake.lake import Lake
from rollout.corrections import correct
from tests.annotate.test_team import member
from tests.annotate.test_labelstudio import choice, tasks_by_step
from tests.rollout.test_corrections import failed_rollout, oracle_actions

W, H = 1080, 2400  # the mock phone's screen


def keypoint(x_px, y_px, label="tap"):
    return {"id": f"k{label}", "type": "keypointlabels", "from_name": "point", "to_name": "image",
            "original_width": W, "original_height": H, "image_rotation": 0,
            "value": {"x": 100 * x_px / W, "y": 100 * y_px / H, "width": 1, "keypointlabels": [label]}}


@pytest.fixture
def lake(tmp_path, label_studio, monkeypatch):
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_TOKEN", label_studio.token)
    return Lake.init(tmp_path / "lake")


def test_a_persons_correction_in_label_studio_becomes_a_corrected_episode(lake, client, project):
    rollout = failed_rollout(lake, 6, good=1)  # opened the clock, then tapped the status bar
    right = oracle_actions(6)[1]  # the add-alarm button
    report = push.push(Lake.open(lake.uri), client, project, preset="failed-rollouts")
    assert report.pushed == 3  # the rollout's three steps (the eval-free, failed training rollout)
    task = tasks_by_step(client, project)[1]
    ann = member(client, lake)
    ann.annotate(task["id"], [keypoint(right.x, right.y), choice("action_type", "tap")])
    pull.pull(Lake.open(lake.uri), client, project)

    result = correct(Lake.open(lake.uri), oracle=False)  # people's corrections only: no oracle annotator
    assert (result.failed_rollouts, result.corrections, result.written) == (1, 1, 1), result.to_dict()
    fresh = Lake.open(lake.uri)
    (row,) = fresh.sql("SELECT episode_id FROM episodes WHERE source = 'corrected'").to_pylist()
    episode = fresh.episode(row["episode_id"])
    (ann_row,) = fresh.sql("SELECT annotation_id, origin FROM annotations_current").to_pylist()
    assert ann_row["origin"].startswith("label-studio:")
    assert episode.meta["correction"] == {"step": 1, "annotation_id": ann_row["annotation_id"],
                                          "annotator": ann.email}
    assert episode.meta["corrected_from"]["episode_id"] == rollout
    taken = [s.action for s in episode.steps]
    assert taken[0] == fresh.episode(rollout).steps[0].action
    assert taken[1].type == "tap" and abs(taken[1].x - right.x) <= 2 and abs(taken[1].y - right.y) <= 2
    assert (episode.outcome, episode.verified_by) == ("success", "verifier")
