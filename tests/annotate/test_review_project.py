"""The side-by-side review on the real Label Studio: annotators answer, a reviewer reviews their answers.

Every person is added with ``people.add_user`` and logs in through Label Studio's form with
the password it printed; they post their own annotations (``tests.annotate.person``). The
review project is made by ``push(kind="review")`` from what the annotators' project pulled.
"""

import json

from annotate import pull, push
from annotate.configs import kind_of
from annotate.review import PREFIX
from tests.annotate.test_labelstudio import H, W, choice, keypoint, tasks_by_step
from tests.annotate.test_team import FAILED, lake, member, resolved  # noqa: F401  (lake: the fixture)


def _answered(lake, client, project, overlap_answers):
    """Push the failed episode's steps, let one annotator per answer annotate step 0, pull."""
    push.push(lake, client, project, preset="failed", overlap=len(overlap_answers))
    task = tasks_by_step(client, project)[0]
    people = [member(client, lake) for _ in overlap_answers]
    for person, answer in zip(people, overlap_answers):
        person.annotate(task["id"], answer)
    pull.pull(lake, client, project)
    return people


def test_a_review_task_shows_each_annotators_answer_by_email_side_by_side(lake, client, project):
    ann1, ann2 = _answered(lake, client, project, [[keypoint(90, 200), choice("action_type", "tap")],
                                                   [keypoint(92, 198), choice("action_type", "tap")]])
    review_project = project + "-review"
    report = push.push(lake, client, review_project, preset="failed", kind="review")
    assert (report.selected, report.pushed) == (1, 1)  # only the step the annotators answered
    assert kind_of(client.project(review_project)["label_config"]) == "review"
    (task,) = client.tasks(report.project_id)
    assert task["data"]["step_index"] == 0 and task["data"]["review"] is True
    shown = {a["annotator"]: a for a in task["data"]["answers"]}
    assert set(shown) == {ann1.email, ann2.email}
    assert "90,200" in shown[ann1.email]["answer"] and "92,198" in shown[ann2.email]["answer"]
    html = task["data"]["answers_html"]
    assert ann1.email in html and ann2.email in html and "(majority)" in html
    drawn = {p["model_version"]: p["result"] for p in task["predictions"]}
    assert set(drawn) == {PREFIX + ann1.email, PREFIX + ann2.email}
    point = next(i for i in drawn[PREFIX + ann1.email] if i["from_name"] == "point")["value"]
    assert abs(point["x"] * W / 100 - 90) <= 1 and abs(point["y"] * H / 100 - 200) <= 1
    assert not any(i["from_name"] == "review" for items in drawn.values() for i in items)  # no verdict pre-ticked
    assert push.push(lake, client, review_project, preset="failed", kind="review").pushed == 0  # idempotent


def test_an_untouched_review_submit_accepts_the_majority_and_an_explicit_fix_wins(lake, client, project):
    moved = [keypoint(90, 200), choice("action_type", "tap")]
    _answered(lake, client, project, [moved, moved])
    before = resolved(lake, 0)
    assert before["resolved_by"] == "majority" and abs(before["x"] - 90) <= 1
    review_project = project + "-review"
    report = push.push(lake, client, review_project, preset="failed", kind="review")
    (task,) = client.tasks(report.project_id)
    rev = member(client, lake)  # not even a reviewer in the team file: a review project's answer is a review
    submitted = rev.annotate(task["id"], task["predictions"][0]["result"])  # the pre-filled form, untouched
    got = pull.pull(lake, client, review_project)
    assert (got.written, got.quarantined) == (1, 0)
    after = resolved(lake, 0)
    assert after["resolved_by"] == "majority" and abs(after["x"] - 90) <= 1 and abs(after["y"] - 200) <= 1
    (row,) = lake.sql("SELECT review_verdict, action_json, annotator FROM annotations WHERE is_review").to_pylist()
    assert row == {"review_verdict": "accept", "action_json": None, "annotator": rev.email}

    rev.update(submitted["id"], [keypoint(30, 40), choice("action_type", "long_press"), choice("review", "fix")])
    pull.pull(lake, client, review_project)
    fixed = resolved(lake, 0)
    assert (fixed["action_type"], fixed["resolved_by"]) == ("long_press", "review")
    assert abs(fixed["x"] - 30) <= 1 and abs(fixed["y"] - 40) <= 1
    untouched_steps = lake.sql("SELECT resolved_by FROM steps_resolved WHERE episode_id = ? AND step_index > 0",
                               [FAILED.episode_id]).column(0).to_pylist()
    assert untouched_steps == [None, None]


def test_an_explicit_reject_of_a_tie_counts_and_the_step_is_marked_incorrect(lake, client, project):
    _answered(lake, client, project, [[keypoint(90, 200), choice("action_type", "tap")],
                                      [choice("step_correct", "yes")]])
    assert resolved(lake, 0)["resolved_by"] == "tie"
    report = push.push(lake, client, project + "-review", preset="failed", kind="review")
    (task,) = client.tasks(report.project_id)
    assert "(tie)" in task["data"]["answers_html"]
    rev = member(client, lake, "reviewer")
    rev.annotate(task["id"], [choice("step_correct", "no"), choice("review", "reject")])
    pull.pull(lake, client, project + "-review")
    (row,) = lake.sql("SELECT resolved_by, step_correct FROM steps_resolved WHERE episode_id = ? "
                      "AND step_index = 0", [FAILED.episode_id]).to_pylist()
    assert row == {"resolved_by": "review", "step_correct": False}
    (review,) = lake.sql("SELECT review_verdict, step_correct, action_json FROM annotations WHERE is_review")\
        .to_pylist()
    assert review["review_verdict"] == "reject" and review["step_correct"] is False
    assert review["action_json"] is None or json.loads(review["action_json"])
