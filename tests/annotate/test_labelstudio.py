"""Push, annotate and pull against a real Label Studio (one server per test session)."""

import json
import threading
import time

import pytest
import uvicorn

from annotate import hooks, pull, push
from annotate import server as ls
from annotate.errors import ProjectNotFound
from api.app import create_app
from api.settings import ApiSettings
from datalake.lake import Lake
from datalake.types import Action, Target
from tests.annotate.conftest import free_port
from tests.factory import H, W, episode

FAILED = episode(seed=11, n_steps=3, outcome="failure")
PASSED = episode(seed=12, n_steps=2)


@pytest.fixture
def lake(lake):
    lake.write_episodes([FAILED, PASSED])
    return lake


def tasks_by_step(client, project):
    return {t["data"]["step_index"]: t for t in client.tasks(client.project(project)["id"])}


def keypoint(x_px, y_px, label="tap"):
    return {"id": f"k{label}", "type": "keypointlabels", "from_name": "point", "to_name": "image",
            "original_width": W, "original_height": H, "image_rotation": 0,
            "value": {"x": 100 * x_px / W, "y": 100 * y_px / H, "width": 1, "keypointlabels": [label]}}


def choice(name, value, to="image"):
    return {"id": name, "type": "choices", "from_name": name, "to_name": to, "value": {"choices": [value]}}


def annotations(lake):
    return lake.sql("SELECT * FROM annotations ORDER BY origin").to_pylist()


def test_server_answers_on_its_port_with_the_generated_token(label_studio, client, ls_lake):
    assert label_studio.managed and label_studio.url.startswith("http://127.0.0.1:")
    assert client.healthy()
    assert client.whoami()["email"] == label_studio.username == ls.USERNAME
    assert ls.credentials(ls_lake.uri)["token"] == label_studio.token


def test_second_serve_reuses_the_running_server(label_studio, ls_lake):
    again = ls.serve(ls_lake.uri, say=lambda m: None)
    assert (again.url, again.pid) == (label_studio.url, label_studio.pid)


def test_push_creates_tasks_with_the_recorded_action_in_percent(lake, client, project):
    report = push.push(lake, client, project, preset="failed", frames_url="http://frames.test:8765/")
    assert (report.selected, report.pushed, report.skipped) == (3, 3, 0)
    task = tasks_by_step(client, project)[0]
    step = lake.sql("SELECT frame_sha FROM steps WHERE episode_id = ? AND step_index = 0",
                    [FAILED.episode_id]).column(0)[0].as_py()
    assert task["data"]["image"] == f"http://frames.test:8765/frames/{step}.png"
    assert task["data"]["episode_id"] == FAILED.episode_id
    (pred,) = task["predictions"]
    point = next(r for r in pred["result"] if r["from_name"] == "point")
    assert (point["original_width"], point["original_height"]) == (W, H)
    assert point["value"]["x"] == pytest.approx(100 * 20 / W) and point["value"]["y"] == pytest.approx(100 * 30 / H)


def test_push_is_idempotent(lake, client, project):
    push.push(lake, client, project, preset="failed")
    again = push.push(lake, client, project, where="true")
    assert (again.pushed, again.skipped) == (2, 3)
    assert len(client.tasks(again.project_id)) == 5
    paged = client.tasks(again.project_id, full=False, page_size=2)
    assert sorted(t["id"] for t in paged) == sorted(t["id"] for t in client.tasks(again.project_id))


def test_pull_writes_the_correction_in_device_pixels(lake, client, project):
    push.push(lake, client, project, preset="failed")
    raw_before = lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist()
    task = tasks_by_step(client, project)[1]
    client.create_annotation(task["id"], [keypoint(77.3, 201.6), choice("action_type", "long_press"),
                                          choice("step_correct", "no")])
    report = pull.pull(lake, client, project)
    assert (report.written, report.quarantined) == (1, 0)
    (row,) = annotations(lake)
    action = json.loads(row["action_json"])
    assert action["type"] == "long_press"
    assert abs(action["x"] - 77.3) <= 1 and abs(action["y"] - 201.6) <= 1
    assert row["step_correct"] is False and row["annotator"] == ls.USERNAME
    assert row["origin"] == f"label-studio:{report.project_id}/{task['id']}/{row['origin'].rsplit('/', 1)[1]}"
    resolved = lake.sql("SELECT action_type, x, y, corrected FROM steps_resolved WHERE episode_id = ? "
                        "AND step_index = 1", [FAILED.episode_id]).to_pylist()
    assert resolved == [{"action_type": "long_press", "x": action["x"], "y": action["y"], "corrected": True}]
    assert lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist() == raw_before


def test_accepted_prediction_round_trips_swipes_elements_and_terminate(client, project, tmp_path):
    lake = Lake.init(tmp_path / "swipes")
    recorded = [Action("swipe", x=3, y=237, x2=101, y2=9),
                Action("tap", x=35, y=35, element=Target(bounds=(10, 20, 60, 50))),
                Action("terminate", status="success")]
    ep = episode(seed=13, n_steps=3)
    ep = type(ep)(**{**ep.__dict__, "steps": tuple(type(s)(s.observation, a) for s, a in zip(ep.steps, recorded))})
    lake.write_episodes([ep])
    push.push(lake, client, project, where="true")
    for task in tasks_by_step(client, project).values():  # the annotator submits the prediction as it is
        client.create_annotation(task["id"], task["predictions"][0]["result"])
    assert pull.pull(lake, client, project).written == 3
    got = {r["step_index"]: Action.from_json(r["action_json"]) for r in annotations(lake)}
    for i in (0, 1):
        for (gx, gy), (wx, wy) in zip(got[i].points(), recorded[i].points(), strict=True):
            assert abs(gx - wx) <= 1 and abs(gy - wy) <= 1
    assert got[0].type == "swipe" and got[1].element.bounds == (10, 20, 60, 50)
    assert got[2] == recorded[2]


def test_pull_twice_writes_nothing_new(lake, client, project):
    push.push(lake, client, project, preset="failed")
    client.create_annotation(tasks_by_step(client, project)[0]["id"], [choice("step_correct", "yes")])
    assert pull.pull(lake, client, project).written == 1
    second = pull.pull(lake, client, project)
    assert (second.written, second.skipped) == (0, 1)
    assert len(annotations(lake)) == 1


def test_corrupt_and_foreign_results_are_quarantined_once(lake, client, project):
    push.push(lake, client, project, preset="failed")
    tasks = tasks_by_step(client, project)
    client.create_annotation(tasks[0]["id"], [choice("sentiment", "happy")])
    client.create_annotation(tasks[1]["id"], [choice("action_type", "teleport")])
    report = pull.pull(lake, client, project)
    assert (report.written, report.quarantined) == (0, 2)
    pull.pull(lake, client, project)
    rows = lake.sql("SELECT reason, episode_id, payload FROM quarantine ORDER BY reason").to_pylist()
    assert len(rows) == 2 and annotations(lake) == []
    assert "teleport" in rows[0]["reason"] and "sentiment" in rows[1]["reason"]
    assert {r["episode_id"] for r in rows} == {FAILED.episode_id}
    assert json.loads(rows[1]["payload"])["annotation"]["result"][0]["from_name"] == "sentiment"


def test_episode_review_records_the_outcome(lake, client, project):
    report = push.push(lake, client, project, preset="failed", kind="episode")
    (task,) = client.tasks(report.project_id)
    assert len(task["data"]["images"]) == 3 and "terminate" in task["data"]["steps_text"]
    client.create_annotation(task["id"], [choice("outcome", "success", to="steps"),
                                          {"id": "n", "type": "textarea", "from_name": "note", "to_name": "steps",
                                           "value": {"text": ["verifier was wrong"]}}])
    pull.pull(lake, client, project)
    (row,) = annotations(lake)
    assert (row["target"], row["outcome"], row["note"], row["step_index"]) == \
        ("episode", "success", "verifier was wrong", None)


def test_pull_of_an_unknown_project_is_an_error(lake, client):
    with pytest.raises(ProjectNotFound):
        pull.pull(lake, client, "no-such-project")


@pytest.fixture
def api(lake):
    """The phoneloop API (webhook + frames) on a free 127.0.0.1 port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(Lake.open(lake.uri), ApiSettings(webhook_secret="s3cret")),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_webhook_delivers_and_a_later_pull_adds_no_duplicate(lake, client, project, api):
    push.push(lake, client, project, preset="failed", frames_url=api)
    hook = hooks.register(client, project, api, "s3cret")
    assert hooks.register(client, project, api, "s3cret")["id"] == hook["id"]
    client.create_annotation(tasks_by_step(client, project)[0]["id"], [keypoint(50, 60)])
    deadline = time.monotonic() + 60  # acknowledged at once, ingested moments later
    while not annotations(Lake.open(lake.uri)) and time.monotonic() < deadline:
        time.sleep(0.2)
    delivered = annotations(Lake.open(lake.uri))
    assert len(delivered) == 1 and json.loads(delivered[0]["action_json"])["type"] == "tap"
    report = pull.pull(Lake.open(lake.uri), client, project)
    # this API was given no Label Studio to list users from: the webhook stored the bare id,
    # and the pull heals that row instead of adding a second annotation
    assert (report.written, report.healed) == (0, 1)
    current = Lake.open(lake.uri).sql("SELECT annotator FROM annotations_current").to_pylist()
    assert current == [{"annotator": ls.USERNAME}]


def test_restart_between_push_and_pull(lake, label_studio, ls_lake, project):
    with label_studio.client() as client:
        push.push(lake, client, project, preset="failed")
        client.create_annotation(tasks_by_step(client, project)[2]["id"], [choice("step_correct", "yes")])
    assert ls.stop(ls_lake.uri) is True
    assert ls.running(ls_lake.uri) is None
    restarted = ls.serve(ls_lake.uri, say=lambda m: None)
    assert restarted.url == label_studio.url and restarted.pid != label_studio.pid
    with restarted.client() as client:
        report = pull.pull(lake, client, project)
    assert report.written == 1 and annotations(lake)[0]["step_index"] == 2


def test_an_unparsed_step_reaches_label_studio_as_invalid_with_nothing_preselected(client, project, tmp_path):
    from dataclasses import replace

    lake = Lake.init(tmp_path / "unparsed")
    ep = episode(seed=15, n_steps=3)
    raw = "invalid: no action found\nclick the thing maybe"
    steps = list(ep.steps)
    steps[1] = replace(steps[1], action=Action("wait"), raw_output=raw, meta={"score": 0.25})
    lake.write_episodes([replace(ep, steps=tuple(steps), episode_id="")])
    push.push(lake, client, project, where="true")
    tasks = tasks_by_step(client, project)
    assert tasks[1]["predictions"] == [] and tasks[0]["predictions"]  # the server has nothing to pre-fill
    assert "INVALID" in tasks[1]["data"]["action_text"]
    assert "click the thing maybe" in tasks[1]["data"]["model_text"] and "0.250" in tasks[1]["data"]["model_text"]
    assert 'value="$model_text"' in client.project(project)["label_config"]


def test_serve_on_a_busy_port_fails_naming_it(tmp_path):
    import socket

    lake = Lake.init(tmp_path / "busy")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(ls.ServerFailedToStart, match=f"port {port} "):
            ls.serve(lake.uri, port=port, say=lambda m: None)
    assert ls.running(lake.uri) is None


def test_serve_comes_back_on_its_port_after_a_crash(label_studio, ls_lake):
    import os
    import signal

    before = ls.running(ls_lake.uri)
    with before.client() as c:
        c.projects()  # open connections: the crash leaves the port's connections in TIME_WAIT
    os.kill(before.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while ls._alive(before.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    back = ls.serve(ls_lake.uri, say=lambda m: None)
    assert back.url == label_studio.url and back.pid != before.pid
