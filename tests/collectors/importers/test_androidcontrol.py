"""AndroidControl: one Example per episode, absolute pixels, accessibility forests -> UI trees."""

import json

from collectors.importers import import_dataset
from datalake.uitree import parse_ui_tree
from tests.collectors.importers.formats import androidcontrol_episode, write_tfrecord

ACTIONS = [{"action_type": "click", "x": 810, "y": 600}, {"action_type": "long_press", "x": 10, "y": 2399},
           {"action_type": "scroll", "direction": "down"}, {"action_type": "open_app", "app_name": "Settings"},
           {"action_type": "input_text", "text": "wifi"}, {"action_type": "navigate_home"},
           {"action_type": "navigate_back"}, {"action_type": "wait"}]


def test_every_action_type_maps_with_goal_step_instructions_and_ui_tree(lake, tmp_path):
    path = write_tfrecord(tmp_path / "ac.tfrecord.gz", [androidcontrol_episode(7, ACTIONS)])
    report = import_dataset(lake, "androidcontrol", [path], split="test")
    assert (report.written, report.quarantined) == (1, 0)
    ep = lake.episode("androidcontrol-7")
    assert ep.instruction == "goal 7" and ep.source == "public"
    assert [s.action.to_dict() for s in ep.steps] == [
        {"type": "tap", "x": 810, "y": 600}, {"type": "long_press", "x": 10, "y": 2399},
        {"type": "scroll", "direction": "down"}, {"type": "open_app", "app": "Settings"},
        {"type": "input_text", "text": "wifi"}, {"type": "key", "key": "home"}, {"type": "key", "key": "back"},
        {"type": "wait"}]
    assert [s.meta["original"] for s in ep.steps] == ACTIONS
    assert [s.meta["step_instruction"] for s in ep.steps] == [f"do {i}" for i in range(len(ACTIONS))]
    assert ep.meta["dataset"] == {"name": "androidcontrol", "split": "test", "episode_id": 7, "screenshots": 9}
    button = [e for e in parse_ui_tree(ep.steps[0].observation.ui_tree) if e.text == "b0"]
    assert button and button[0].bounds == (100, 200, 300, 260) and button[0].clickable
    assert button[0].resource_id == "com.example:id/ok" and button[0].parent == 0


def test_coordinates_are_scaled_when_the_png_is_smaller_than_the_declared_screen(lake, tmp_path):
    ep = androidcontrol_episode(8, [{"action_type": "click", "x": 810, "y": 600}], size=(540, 1200),
                                declared=(1080, 2400))
    import_dataset(lake, "androidcontrol", [write_tfrecord(tmp_path / "a.gz", [ep])])
    (row,) = lake.sql("SELECT action_json FROM steps").to_pylist()
    assert json.loads(row["action_json"]) == {"type": "tap", "x": 405, "y": 300}


def test_bad_episodes_are_quarantined_with_file_offset_and_reason(lake, tmp_path):
    records = [androidcontrol_episode(1, [{"action_type": "fly"}]),
               androidcontrol_episode(2, [{"action_type": "click", "x": 2000, "y": 10}]),
               androidcontrol_episode(3, [{"action_type": "click", "x": 5, "y": 5}])]
    path = write_tfrecord(tmp_path / "a.gz", records)
    report = import_dataset(lake, "androidcontrol", [path])
    assert (report.written, report.quarantined) == (1, 2)
    q = {r["episode_id"]: r for r in lake.sql("SELECT * FROM quarantine").to_pylist()}
    assert "unknown action type 'fly'" in q["androidcontrol-1"]["reason"]
    assert "outside the screen" in q["androidcontrol-2"]["reason"]
    assert q["androidcontrol-2"]["locator"].startswith("record 1 at byte ")
    assert q["androidcontrol-1"]["payload"] == records[0] and q["androidcontrol-1"]["origin"] == str(path)
    again = import_dataset(lake, "androidcontrol", [path])
    assert again.written == 0 and again.skipped == 1
