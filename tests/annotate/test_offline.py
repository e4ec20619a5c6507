"""Annotation pieces that need no Label Studio: interfaces, predictions, selection, credentials."""

import json
import os
import stat
import xml.etree.ElementTree as ET

import pytest

from annotate import configs, convert, push
from annotate import server as ls
from annotate.errors import InvalidPayload, InvalidSelection, ServerNotRunning
from datalake.types import ACTION_TYPES, Action, Target
from tests.factory import H, W, episode


def test_interfaces_are_xml_with_the_controls_pull_reads():
    step = ET.fromstring(configs.step_review())
    names = {el.get("name") for el in step.iter() if el.get("name")}
    assert {"image", "point", "element", "text", "note", *convert.CHOICES} - {"outcome"} <= names
    episode_view = ET.fromstring(configs.episode_review())
    assert {"outcome", "note"} <= {el.get("name") for el in episode_view.iter()}
    assert next(episode_view.iter("Image")).get("valueList") == "$images"


def test_kind_of_tells_the_interfaces_apart():
    assert configs.kind_of(configs.step_review()) == "step"
    assert configs.kind_of(configs.episode_review()) == "episode"
    with pytest.raises(ValueError):
        configs.config("frame")


RECORDED = [
    Action("tap", x=17, y=231),
    Action("double_tap", x=0, y=239),
    Action("long_press", x=107, y=0, duration_ms=800,
           element=Target(index=3, resource_id="com.example:id/ok", bounds=(10, 20, 60, 50))),
    Action("swipe", x=5, y=200, x2=90, y2=13, duration_ms=300),
    Action("scroll", direction="down"),
    Action("input_text", text="hello", x=33, y=44, clear=True),
    Action("key", key="back"),
    Action("open_app", app="Settings"),
    Action("wait", seconds=2),
    Action("answer", text="42"),
    Action("ask_user", text="which one?"),
    Action("shell", command="am start -n x/.Main"),
    Action("tool", name="search", args={"q": "weather"}),
    Action("terminate", status="infeasible"),
]


@pytest.mark.parametrize("action", RECORDED, ids=lambda a: a.type)
def test_accepted_prediction_is_the_recorded_action(action):
    assert {a.type for a in RECORDED} == set(ACTION_TYPES)
    fields = convert.read_results(push.prediction(action, W, H))
    assert convert._action(fields, action.to_dict()) == action


@pytest.mark.parametrize("action", RECORDED[:4], ids=lambda a: a.type)
def test_prediction_points_convert_back_within_a_pixel_without_the_recorded_action(action):
    back = convert._action(convert.read_results(push.prediction(action, W, H)))
    assert back.type == action.type
    for got, want in zip(back.points(), action.points(), strict=True):
        assert abs(got[0] - want[0]) <= 1 and abs(got[1] - want[1]) <= 1
    if action.element:
        assert back.element.bounds == action.element.bounds and back.element.resource_id is None


def _arrows(items):
    return [i for i in items if i["type"] == "polygonlabels" and i["from_name"] == "path"]


def test_a_swipe_is_drawn_as_an_arrow_from_its_start_to_its_end():
    swipe = RECORDED[3]  # 5,200 -> 90,13 on a W x H frame
    (arrow,) = _arrows(push.prediction(swipe, W, H))
    points = [(x * W / 100, y * H / 100) for x, y in arrow["value"]["points"]]
    assert arrow["value"]["closed"] and len(points) == 7
    tip = points[3]
    assert abs(tip[0] - swipe.x2) < 0.01 and abs(tip[1] - swipe.y2) < 0.01  # the head ends at the swipe's end
    tail = ((points[0][0] + points[-1][0]) / 2, (points[0][1] + points[-1][1]) / 2)
    assert abs(tail[0] - swipe.x) < 0.01 and abs(tail[1] - swipe.y) < 0.01  # the shaft starts at its start
    assert not _arrows(push.prediction(RECORDED[0], W, H))  # a tap has no arrow
    assert 'name="path"' in configs.step_review() and 'name="path"' in configs.episode_review()


def test_episode_tasks_draw_each_arrow_on_its_own_frame():
    rows = [{"episode_id": "e", "instruction": "swipe twice", "outcome": "success", "frame_sha": "a" * 64,
             "action_json": RECORDED[3].to_json(), "step_index": k, "frame_width": W, "frame_height": H}
            for k in range(2)]
    (task,) = push.episode_tasks(rows, "http://127.0.0.1:1")
    arrows = _arrows(task["predictions"][0]["result"])
    assert sorted(a["item_index"] for a in arrows) == [0, 1] and {a["to_name"] for a in arrows} == {"frames"}
    assert len({a["id"] for a in arrows}) == 2


def test_moved_box_replaces_the_recorded_element():
    recorded = Action("tap", x=20, y=30, element=Target(resource_id="ok", bounds=(10, 20, 60, 50)))
    items = push.prediction(recorded, W, H)
    box = next(i for i in items if i["from_name"] == "element")
    box["value"]["x"] += 20
    back = convert._action(convert.read_results(items), recorded.to_dict())
    assert back.element.resource_id is None and back.element.bounds[0] > 25


def test_foreign_result_item_is_invalid():
    with pytest.raises(InvalidPayload, match="sentiment"):
        convert.read_results([{"type": "choices", "from_name": "sentiment", "value": {"choices": ["x"]}}])


def test_rectangle_leaving_the_image_is_invalid():
    item = {"type": "rectanglelabels", "from_name": "element", "original_width": W, "original_height": H,
            "value": {"x": 90, "y": 10, "width": 20, "height": 5}}
    with pytest.raises(InvalidPayload, match="leaves the image"):
        convert.read_results([item])


@pytest.fixture
def mixed_lake(lake):
    lake.write_episodes([episode(seed=1, n_steps=3, outcome="failure"),
                         episode(seed=2, n_steps=2, outcome="unknown", verified_by="none"),
                         episode(seed=3, n_steps=4)])
    return lake


def test_presets_select_failed_and_unverified_steps(mixed_lake):
    assert {r["outcome"] for r in push.select_steps(mixed_lake, "failed")} == {"failure"}
    assert len(push.select_steps(mixed_lake, "failed")) == 3
    assert len(push.select_steps(mixed_lake, "unverified")) == 2


def test_random_preset_is_a_deterministic_sample(mixed_lake):
    everything = push.select_steps(mixed_lake, "random:1")
    half = push.select_steps(mixed_lake, "random:0.5")
    assert len(everything) == 9 and half == push.select_steps(mixed_lake, "random:0.5")
    assert len(half) < 9


def test_where_selects_by_sql(mixed_lake):
    rows = push.select_steps(mixed_lake, where="s.action_type = 'terminate' AND e.outcome = 'success'")
    assert [r["step_index"] for r in rows] == [3]


@pytest.mark.parametrize("preset, where", [
    (None, None), ("failed", "true"), ("random:2", None), ("random:x", None), ("best", None),
    (None, "no_such_column = 1"), (None, "1; DROP TABLE steps"),
])
def test_bad_selection_is_refused(mixed_lake, preset, where):
    with pytest.raises(InvalidSelection):
        push.select_steps(mixed_lake, preset, where)


def test_credentials_are_generated_once_and_private(lake):
    creds = ls.credentials(lake.uri)
    path = ls.home(lake.uri) / "credentials.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(creds["token"]) == 40 and creds["password"]
    assert ls.credentials(lake.uri) == creds == json.loads(path.read_text())


def test_status_without_a_server_says_so(lake, monkeypatch):
    monkeypatch.delenv("PHONELOOP_LABEL_STUDIO_URL", raising=False)
    info = ls.status(lake.uri)
    assert info["running"] is False and info["projects"] == []
    with pytest.raises(ServerNotRunning):
        ls.connect(lake.uri)


def test_configured_server_that_does_not_answer_is_an_error(lake, monkeypatch):
    from tests.annotate.conftest import free_port

    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_TOKEN", "t")
    with pytest.raises(ServerNotRunning, match="does not answer"):
        ls.serve(lake.uri)


def test_stale_pid_file_naming_another_process_is_ignored(lake, monkeypatch):
    monkeypatch.delenv("PHONELOOP_LABEL_STUDIO_URL", raising=False)
    state = ls.home(lake.uri) / "server.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"pid": os.getpid(), "port": 1, "url": "http://127.0.0.1:1"}))
    assert ls.running(lake.uri) is None
    assert ls.stop(lake.uri) is False  # and this test process is still alive to assert it
    assert "pid" not in json.loads(state.read_text())


def test_busy_preferred_port_is_replaced_by_a_free_one():
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert ls._free_port(taken) != taken
