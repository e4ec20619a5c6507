"""A team on the real Label Studio: real users, overlap, a reviewer, webhooks captured from the server.

Each person is added with ``annotate users add`` (the CLI or ``people.add_user``), logs in
through Label Studio's login form with the password it printed (``tests.annotate.person``)
and submits their own annotations; Label Studio then sends its own webhooks, which a
loopback receiver captures as they arrive: the payloads below are the server's, never
hand-built.
"""

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotate import hooks, people, pull, push
from annotate.errors import LabelStudioError
from annotate.webhook import ingest
from curation.build import select
from curation.recipe import parse_recipe
from datalake.lake import Lake
from tests.annotate.person import LoginFailed, Person
from tests.annotate.test_labelstudio import choice, keypoint, tasks_by_step
from tests.factory import episode

FAILED = episode(seed=11, n_steps=3, outcome="failure")
VERIFIED = episode(seed=14, n_steps=2, verified_by="verifier")
PASSED = episode(seed=12, n_steps=2)
SUCCESSES = parse_recipe("name: ok\nselect: |\n  SELECT episode_id FROM episodes_resolved\n"
                         "  WHERE outcome = 'success' AND verified_by IN ('verifier', 'human')\n"
                         "exports:\n  - {format: episodes}\n")


def fresh_lake(path):
    lake = Lake.init(path)
    lake.write_episodes([FAILED, VERIFIED, PASSED])
    return lake


@pytest.fixture
def lake(tmp_path, label_studio, monkeypatch):
    """A lake whose API-side webhook resolves people through the session's Label Studio."""
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_TOKEN", label_studio.token)
    return fresh_lake(tmp_path / "lake")


def receiver(host="127.0.0.1"):
    got = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_port}", got


@pytest.fixture
def captured():
    server, url, got = receiver()
    yield url, got
    server.shutdown()
    server.server_close()


def member(client, lake, role="annotator") -> Person:
    """A new team member, logged in through Label Studio's form with the password add_user printed."""
    user = people.add_user(client, lake.uri, f"{role}-{uuid.uuid4().hex[:8]}@example.com", role)
    person = Person.login(client.url, user["email"], user["password"])
    assert person.id == user["id"]
    return person


def stored(lake):
    cols = ("annotation_id, annotator, annotator_id, annotator_email, ls_project_id, ls_task_id, ls_annotation_id, "
            "ls_created_at, ls_updated_at, lead_time, is_review, action_json, step_correct, note")
    return lake.sql(f"SELECT {cols} FROM annotations ORDER BY annotation_id").to_pylist()


def resolved(lake, step_index, episode_id=FAILED.episode_id):
    (row,) = lake.sql("SELECT action_type, x, y, resolved_by, corrected FROM steps_resolved "
                      "WHERE episode_id = ? AND step_index = ?", [episode_id, step_index]).to_pylist()
    return row


def test_captured_webhooks_in_any_order_give_the_rows_a_pull_gives(lake, client, project, captured, tmp_path):
    url, got = captured
    push.push(lake, client, project, preset="failed")
    hooks.register(client, project, url, "s3cret")
    ann1, ann2 = member(client, lake), member(client, lake)
    tasks = tasks_by_step(client, project)
    a = [keypoint(50, 60), choice("action_type", "tap")]
    b = [keypoint(80, 90), choice("action_type", "long_press")]
    first = ann1.annotate(tasks[0]["id"], a, lead_time=3.0)
    ann1.update(first["id"], b)
    ann1.update(first["id"], a)  # A -> B -> A
    ann2.annotate(tasks[0]["id"], [choice("step_correct", "yes")])
    ann1.annotate(tasks[1]["id"], [keypoint(10, 10), choice("action_type", "tap"), choice("direction", "up")])
    assert len(got) == 5 and all(isinstance(p["annotation"]["completed_by"], int) for p in got)

    in_order = fresh_lake(tmp_path / "in-order")
    for payload in got:
        ingest(in_order, payload)
    shuffled = fresh_lake(tmp_path / "shuffled")
    for payload in [*reversed(got), got[2], got[0]]:
        ingest(shuffled, payload)
    assert stored(in_order) == stored(shuffled) and len(stored(in_order)) == 5
    assert pull.pull(in_order, client, project).written == 0  # the pull finds every row already there

    report = pull.pull(lake, client, project)
    assert (report.written, report.quarantined) == (3, 0)
    by_id = {r["annotation_id"]: r for r in stored(in_order)}
    for row in stored(lake):
        assert by_id[row["annotation_id"]] == row  # a pull and the webhook write the same row
    mine = [r for r in stored(lake) if r["annotator_id"] == str(ann1.id)]
    assert {r["annotator_email"] for r in mine} == {r["annotator"] for r in mine} == {ann1.email}
    assert all(r["ls_updated_at"] is not None and r["ls_project_id"] == report.project_id for r in mine)
    for one in (lake, in_order, shuffled):
        assert resolved(one, 0)["action_type"] == "tap" and abs(resolved(one, 0)["x"] - 50) <= 1  # A, not B
        step1 = one.sql("SELECT note, action_json FROM annotations WHERE step_index = 1").to_pylist()
        assert json.loads(step1[0]["action_json"])["type"] == "tap"
        assert "direction 'up'" in step1[0]["note"] and "does not apply to tap" in step1[0]["note"]


def test_overlap_two_annotators_then_a_reviewer_fix(lake, client, project):
    raw = lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist()
    report = push.push(lake, client, project, preset="failed", overlap=2)
    assert report.overlap == 2 and client.project(project)["maximum_annotations"] == 2
    task = tasks_by_step(client, project)[1]
    assert task["overlap"] == 2
    ann1, ann2, rev = member(client, lake), member(client, lake), member(client, lake, "reviewer")
    ann1.annotate(task["id"], [keypoint(60, 100), choice("action_type", "tap")])
    ann2.annotate(task["id"], [keypoint(63, 104), choice("action_type", "tap")])
    pull.pull(lake, client, project)
    agreed = resolved(lake, 1)
    assert agreed["resolved_by"] == "majority" and agreed["action_type"] == "tap"
    assert 59 <= agreed["x"] <= 64 and agreed["corrected"] is True

    rev.annotate(task["id"], [keypoint(20, 40), choice("action_type", "long_press"), choice("review", "fix")])
    pull.pull(lake, client, project)
    fixed = resolved(lake, 1)
    assert (fixed["action_type"], fixed["resolved_by"]) == ("long_press", "review")
    assert abs(fixed["x"] - 20) <= 1 and abs(fixed["y"] - 40) <= 1
    (review,) = lake.sql("SELECT is_review, review_verdict, annotator FROM annotations WHERE is_review").to_pylist()
    assert review == {"is_review": True, "review_verdict": "fix", "annotator": rev.email}
    assert lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist() == raw
    listed = {u["email"]: u["role"] for u in people.list_users(client, lake.uri)}
    assert listed[rev.email] == "reviewer" and listed[ann1.email] == "annotator"


def test_a_human_failure_verdict_removes_the_episode_from_a_selection(lake, client, project):
    assert VERIFIED.episode_id in select(lake, SUCCESSES)
    report = push.push(lake, client, project, where=f"e.episode_id = '{VERIFIED.episode_id}'", kind="episode")
    (task,) = client.tasks(report.project_id)
    judge = member(client, lake)
    judge.annotate(task["id"], [choice("outcome", "failure", to="steps")])
    pull.pull(lake, client, project)
    assert select(lake, SUCCESSES) == [PASSED.episode_id]
    (row,) = lake.sql("SELECT outcome, verified_by, recorded_outcome, human_rejected FROM episodes_resolved "
                      "WHERE episode_id = ?", [VERIFIED.episode_id]).to_pylist()
    assert row == {"outcome": "failure", "verified_by": "human", "recorded_outcome": "success",
                   "human_rejected": True}
    raw = lake.sql("SELECT outcome, verified_by FROM episodes WHERE episode_id = ?", [VERIFIED.episode_id])
    assert raw.to_pylist() == [{"outcome": "success", "verified_by": "verifier"}]


def test_webhooks_reach_the_api_address_and_no_other_private_one(lake, client, project, captured):
    url, got = captured
    other, other_url, other_got = receiver("127.0.0.2")  # another loopback address: banned
    try:
        push.push(lake, client, project, preset="failed")
        hooks.register(client, project, url, "s3cret")
        try:
            hooks.register(client, project, other_url, "s3cret")
        except LabelStudioError:
            pass  # refused at creation: as good as refused at delivery
        client.create_annotation(tasks_by_step(client, project)[0]["id"], [choice("step_correct", "yes")])
    finally:
        other.shutdown()
        other.server_close()
    assert len(got) == 1 and other_got == []


def test_an_item_already_quarantined_is_not_a_new_failure(lake, client, project):
    push.push(lake, client, project, preset="failed")
    client.create_annotation(tasks_by_step(client, project)[0]["id"], [choice("sentiment", "happy")])
    first = pull.pull(lake, client, project)
    again = pull.pull(lake, client, project)
    assert (first.quarantined, again.quarantined, again.already_quarantined) == (1, 0, 1)
    assert lake.sql("SELECT count(*) AS n FROM quarantine").to_pylist() == [{"n": 1}]


def test_a_user_added_by_the_cli_logs_in_with_the_printed_password(lake, label_studio):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    email = f"cli-{uuid.uuid4().hex[:8]}@example.com"
    result = CliRunner().invoke(app, ["annotate", "users", "add", email, "--lake", lake.uri, "--role", "reviewer",
                                      "--json"])
    assert result.exit_code == 0, result.output
    user = json.loads(result.stdout)
    assert user["password"] and user["role"] == "reviewer"
    person = Person.login(label_studio.url, email, user["password"])
    assert person.id == user["id"]
    with pytest.raises(LoginFailed):
        Person.login(label_studio.url, email, "not-" + user["password"])


def test_an_untouched_review_submit_does_not_override_a_correction(lake, client, project):
    push.push(lake, client, project, preset="failed")
    task = tasks_by_step(client, project)[0]
    ann, rev = member(client, lake), member(client, lake, "reviewer")
    ann.annotate(task["id"], [keypoint(90, 200), choice("action_type", "tap")])  # the annotator moves the tap
    rev.annotate(task["id"], task["predictions"][0]["result"])  # the reviewer submits the pre-filled form
    assert pull.pull(lake, client, project).written == 2
    got = resolved(lake, 0)
    assert got["resolved_by"] != "review" and abs(got["x"] - 90) <= 1 and abs(got["y"] - 200) <= 1
    (review,) = lake.sql("SELECT review_verdict, action_json, note FROM annotations WHERE is_review").to_pylist()
    assert (review["review_verdict"], review["action_json"]) == ("accept", None)
    assert "counted as accept" in review["note"]


def test_deleted_verdicts_are_retracted_and_the_episode_is_no_longer_rejected(lake, client, project):
    report = push.push(lake, client, project, where=f"e.episode_id = '{VERIFIED.episode_id}'", kind="episode")
    (task,) = client.tasks(report.project_id)
    judges = [member(client, lake), member(client, lake)]
    verdicts = [j.annotate(task["id"], [choice("outcome", "failure", to="steps")]) for j in judges]
    pull.pull(lake, client, project)
    episode_row = "SELECT outcome, verified_by, human_rejected FROM episodes_resolved WHERE episode_id = ?"
    assert lake.sql(episode_row, [VERIFIED.episode_id]).to_pylist()[0]["human_rejected"] is True
    stored_ids = set(lake.sql("SELECT annotation_id FROM annotations").column(0).to_pylist())
    for judge, verdict in zip(judges, verdicts):
        judge.delete(verdict["id"])
    again = pull.pull(lake, client, project)
    assert (again.retracted, again.written) == (2, 0)
    assert lake.sql(episode_row, [VERIFIED.episode_id]).to_pylist() == [
        {"outcome": "success", "verified_by": "verifier", "human_rejected": False}]
    marks = lake.sql("SELECT replaces, origin, annotator FROM annotations WHERE status = 'retracted'").to_pylist()
    assert {m["replaces"] for m in marks} == stored_ids  # lineage: each retraction names the row it retracts
    assert {m["annotator"] for m in marks} == {j.email for j in judges}
    assert lake.sql("SELECT count(*) AS n FROM annotations_current").to_pylist() == [{"n": 0}]
    assert pull.pull(lake, client, project).retracted == 0  # once


def test_a_row_stored_under_a_bare_id_is_healed_by_the_next_pull(lake, client, project, captured, monkeypatch,
                                                                 caplog):
    import logging

    url, got = captured
    push.push(lake, client, project, preset="failed")
    hooks.register(client, project, url, "s3cret")
    ann, rev = member(client, lake), member(client, lake, "reviewer")
    task = tasks_by_step(client, project)[0]
    ann.annotate(task["id"], [keypoint(90, 200), choice("action_type", "tap")])
    rev.annotate(task["id"], [keypoint(5, 5), choice("action_type", "long_press"), choice("review", "fix")])
    assert len(got) == 2
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_TOKEN", "stale-token")  # the API cannot list users
    with caplog.at_level(logging.WARNING, logger="phoneloop.annotate"):
        for payload in got:
            ingest(lake, payload)
    assert "cannot list Label Studio users" in caplog.text and "HTTP 401" in caplog.text
    bare = lake.sql("SELECT annotator, annotator_email, is_review FROM annotations ORDER BY annotator").to_pylist()
    assert bare == [{"annotator": str(p.id), "annotator_email": None, "is_review": False}
                    for p in sorted((ann, rev), key=lambda p: str(p.id))]
    assert resolved(lake, 0)["resolved_by"] == "tie"  # the reviewer counted as a second annotator

    report = pull.pull(lake, client, project)  # the pull lists the users: it heals both rows
    assert (report.healed, report.written, report.warnings) == (2, 0, [])
    current = lake.sql("SELECT annotator, is_review, replaces FROM annotations_current ORDER BY annotator").to_pylist()
    assert [(r["annotator"], r["is_review"]) for r in current] == sorted([(ann.email, False), (rev.email, True)])
    assert all(r["replaces"] for r in current)
    fixed = resolved(lake, 0)
    assert (fixed["action_type"], fixed["resolved_by"]) == ("long_press", "review")
    assert pull.pull(lake, client, project).healed == 0
