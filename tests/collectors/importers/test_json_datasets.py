"""GUI-Odyssey (0-1000 grid) and AMEX (absolute pixels with device_dim), in their JSON shapes."""

import json

from collectors.importers import import_dataset
from tests.collectors.importers.formats import write_amex, write_odyssey


def actions(lake):
    return [json.loads(r["action_json"]) for r in
            lake.sql("SELECT action_json FROM steps ORDER BY episode_id, step_index").to_pylist()]


def test_odyssey_actions_map_from_the_1000_grid(lake, tmp_path):
    write_odyssey(tmp_path / "odyssey", "ep1", [
        {"action": "CLICK", "info": [[750, 250]]}, {"action": "SCROLL", "info": [[500, 800], [500, 200]]},
        {"action": "LONG_PRESS", "info": [[1000, 1000]]}, {"action": "TYPE", "info": "a pen"},
        {"action": "TEXT", "info": "x"}, {"action": "CLICK", "info": "KEY_HOME"}, {"action": "HOME", "info": ""},
        {"action": "BACK", "info": ""}, {"action": "IMPOSSIBLE", "info": ""}, {"action": "COMPLETE", "info": ""}])
    report = import_dataset(lake, "gui-odyssey", [tmp_path / "odyssey" / "annotations"])
    assert (report.written, report.quarantined) == (1, 0)
    assert actions(lake) == [
        {"type": "tap", "x": 810, "y": 600}, {"type": "swipe", "x": 540, "y": 1920, "x2": 540, "y2": 480},
        {"type": "long_press", "x": 1079, "y": 2399}, {"type": "input_text", "text": "a pen"},
        {"type": "input_text", "text": "x"}, {"type": "key", "key": "home"}, {"type": "key", "key": "home"},
        {"type": "key", "key": "back"}, {"type": "terminate", "status": "infeasible"},
        {"type": "terminate", "status": "success"}]
    ep = lake.episode("gui-odyssey-ep1")
    assert ep.instruction == "Buy a pen on Amazon" and ep.category == "Web_Shopping" and ep.app == "Chrome, Amazon"
    assert ep.meta["dataset"]["name"] == "gui-odyssey" and ep.meta["dataset"]["episode_id"] == "ep1"
    assert ep.steps[0].meta["original"] == {"action": "CLICK", "info": [[750, 250]], "step": 0,
                                            "screenshot": "ep1_0.png"}


def test_odyssey_bad_episodes_are_quarantined(lake, tmp_path):
    root = tmp_path / "odyssey"
    write_odyssey(root, "off", [{"action": "CLICK", "info": [[1200, 10]]}])
    write_odyssey(root, "unknown", [{"action": "DANCE", "info": ""}])
    write_odyssey(root, "escape", [{"action": "COMPLETE", "info": "", "screenshot": "../../secret.png"}])
    path = write_odyssey(root, "missing", [{"action": "COMPLETE", "info": ""}])
    (root / "screenshots" / "missing_0.png").unlink()
    (root / "annotations" / "broken.json").write_text("{not json")
    report = import_dataset(lake, "gui-odyssey", [root / "annotations"])
    assert (report.written, report.quarantined) == (0, 5)
    reasons = {r["origin"].split("/")[-1]: r["reason"] for r in lake.sql("SELECT * FROM quarantine").to_pylist()}
    assert "outside 0-1000" in reasons["off.json"] and "unknown action type 'DANCE'" in reasons["unknown.json"]
    assert "leaves the dataset folder" in reasons["escape.json"] or "missing" in reasons["escape.json"]
    assert "missing" in reasons[path.name] and "not valid JSON" in reasons["broken.json"]


def test_amex_actions_map_in_pixels_with_per_step_device_dim(lake, tmp_path):
    write_amex(tmp_path / "amex", "a1", [
        {"action": "TAP", "touch_coord": [810, 600], "lift_coord": [810, 600]},
        {"action": "SWIPE", "touch_coord": [540, 1900], "lift_coord": [540, 500]},
        {"action": "TYPE", "type_text": "wifi"}, {"action": "PRESS_BACK"}, {"action": "PRESS_HOME"},
        {"action": "PRESS_ENTER"}, {"action": "TASK_IMPOSSIBLE"}, {"action": "TASK_COMPLETE"}])
    write_amex(tmp_path / "amex", "a2", [{"action": "TAP", "touch_coord": [810, 600]}], size=(540, 1200),
               dim=(1080, 2400))
    report = import_dataset(lake, "amex", [tmp_path / "amex" / "episodes"])
    assert (report.written, report.quarantined) == (2, 0)
    assert actions(lake) == [
        {"type": "tap", "x": 810, "y": 600}, {"type": "swipe", "x": 540, "y": 1900, "x2": 540, "y2": 500},
        {"type": "input_text", "text": "wifi"}, {"type": "key", "key": "back"}, {"type": "key", "key": "home"},
        {"type": "key", "key": "enter"}, {"type": "terminate", "status": "infeasible"},
        {"type": "terminate", "status": "success"},
        {"type": "tap", "x": 405, "y": 300}]
    assert lake.episode("amex-a1").steps[0].meta["original"]["touch_coord"] == [810, 600]


def test_amex_offscreen_and_misshaped_screens_are_quarantined(lake, tmp_path):
    write_amex(tmp_path / "amex", "off", [{"action": "TAP", "touch_coord": [1080, 5]}])
    write_amex(tmp_path / "amex", "shape", [{"action": "TAP", "touch_coord": [5, 5]}], size=(1080, 1080),
               dim=(1080, 2400))
    report = import_dataset(lake, "amex", [tmp_path / "amex" / "episodes"])
    assert (report.written, report.quarantined) == (0, 2)
    reasons = {r["episode_id"]: r["reason"] for r in lake.sql("SELECT * FROM quarantine").to_pylist()}
    assert "outside the screen" in reasons["amex-off"] and "not the shape of device_dim" in reasons["amex-shape"]


def test_odyssey_dataset_root_skips_its_splits_with_a_note(lake, tmp_path):
    from tests.collectors.importers.formats import write_odyssey_splits

    root = tmp_path / "GUI-Odyssey"
    for name in ("ep1", "ep2"):
        write_odyssey(root, name, [{"action": "COMPLETE", "info": ""}])
    write_odyssey_splits(root, ["ep1", "ep2"])
    report = import_dataset(lake, "gui-odyssey", [root])
    assert (report.written, report.quarantined) == (2, 0)
    assert any("splits" in note and "4 files" in note for note in report.notes), report.notes


def test_amex_dataset_root_skips_element_annotations_with_a_note(lake, tmp_path):
    from tests.collectors.importers.formats import write_amex_element_anno

    root = tmp_path / "AMEX"
    write_amex(root, "a1", [{"action": "TAP", "touch_coord": [810, 600]}, {"action": "TASK_COMPLETE"}],
               folder="instruction_anno")
    for i in range(2):
        write_amex_element_anno(root, f"a1_{i}.png")
    report = import_dataset(lake, "amex", [root])
    assert (report.written, report.quarantined) == (1, 0)
    assert any("element_anno" in note and "2 files" in note for note in report.notes), report.notes


def test_cli_dataset_root_import_exits_zero_and_prints_the_note(tmp_path):
    from typer.testing import CliRunner

    from phoneloop.cli import app
    from tests.collectors.importers.formats import write_odyssey_splits

    root = tmp_path / "GUI-Odyssey"
    write_odyssey(root, "ep1", [{"action": "COMPLETE", "info": ""}])
    write_odyssey_splits(root, ["ep1"])
    runner = CliRunner()
    runner.invoke(app, ["lake", "init", "--lake", str(tmp_path / "lake")])
    out = runner.invoke(app, ["lake", "import", "--format", "gui-odyssey", str(root), "--lake", str(tmp_path / "lake")])
    assert out.exit_code == 0, out.output
    assert "1 episodes written" in out.output and "skipped 4 files" in out.output and "split lists" in out.output
