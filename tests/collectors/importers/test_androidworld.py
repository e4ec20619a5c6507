"""AndroidWorld runs: the checkpointer's gzipped pickles of episode dicts with JSONAction steps."""

import gzip
import pickle

from collectors.importers import import_dataset
from tests.collectors.importers.formats import android_world_module, aw_episode, write_android_world


def test_episode_becomes_agent_run_verified_by_the_task(lake, tmp_path):
    A = android_world_module()
    actions = [A(action_type="click", x=810, y=600), A(action_type="input_text", text="hi", x=5, y=5),
               A(action_type="scroll", direction="down"), A(action_type="swipe", direction="up"),
               A(action_type="navigate_back"), A(action_type="navigate_home"), A(action_type="keyboard_enter"),
               A(action_type="open_app", app_name="Settings"), A(action_type="wait"),
               A(action_type="long_press", x=1, y=2), A(action_type="double_tap", x=3, y=4),
               A(action_type="answer", text="42"), A(action_type="status", goal_status="complete")]
    path = write_android_world(tmp_path / "SystemWifiTurnOff.pkl.gz",
                               [aw_episode(actions, 1.0), aw_episode(actions[-1:], 0.0)])
    report = import_dataset(lake, "androidworld", [tmp_path])
    assert (report.written, report.quarantined) == (2, 0)
    eps = {e["num_steps"]: e for e in lake.sql("SELECT * FROM episodes").to_pylist()}
    ok, failed = eps[len(actions)], eps[1]
    assert (ok["source"], ok["outcome"], ok["verified_by"], ok["score"]) == ("agent", "success", "verifier", 1.0)
    assert (failed["outcome"], failed["score"]) == ("failure", 0.0)
    ep = lake.episode(ok["episode_id"])
    assert ep.task == "SystemWifiTurnOff" and ep.instruction == "Turn wifi off" and ep.policy == "m3a_gpt4v"
    assert [s.action.to_dict() for s in ep.steps] == [
        {"type": "tap", "x": 810, "y": 600}, {"type": "input_text", "x": 5, "y": 5, "text": "hi"},
        {"type": "scroll", "direction": "down"}, {"type": "scroll", "direction": "down"},
        {"type": "key", "key": "back"}, {"type": "key", "key": "home"}, {"type": "key", "key": "enter"},
        {"type": "open_app", "app": "Settings"}, {"type": "wait"}, {"type": "long_press", "x": 1, "y": 2},
        {"type": "double_tap", "x": 3, "y": 4}, {"type": "answer", "text": "42"},
        {"type": "terminate", "status": "success"}]
    assert ep.steps[0].meta["original"]["action_type"] == "click" and ep.steps[0].meta["summary"] == "did it"
    assert ep.steps[0].observation.size == (1080, 2400)
    assert ep.meta["dataset"]["file"] == path.name and ep.meta["dataset"]["seed"] == 30
    assert import_dataset(lake, "androidworld", [path]).skipped == 2


def test_screenshot_arrays_become_pngs_of_the_same_pixels(lake, tmp_path):
    import io

    import numpy as np
    from PIL import Image

    A = android_world_module()
    record = aw_episode([A(action_type="wait"), A(action_type="status", goal_status="complete")])
    record["episode_data"]["raw_screenshot"][1] = np.dstack(  # RGBA, as some emulator captures are
        [record["episode_data"]["raw_screenshot"][1], np.full((2400, 1080), 255, np.uint8)])
    import_dataset(lake, "androidworld", [write_android_world(tmp_path / "T.pkl.gz", [record])])
    (row,) = lake.sql("SELECT episode_id FROM episodes").to_pylist()
    stored = [s.observation.screenshot for s in lake.episode(row["episode_id"]).steps]
    for png, pixels in zip(stored, record["episode_data"]["raw_screenshot"], strict=True):
        decoded = np.asarray(Image.open(io.BytesIO(png)))
        assert decoded.shape == pixels.shape and (decoded == pixels).all()


def test_unmappable_episode_and_unsafe_pickle_are_quarantined(lake, tmp_path):
    A = android_world_module()
    write_android_world(tmp_path / "a.pkl.gz", [aw_episode([A(action_type="unknown")]),
                                                aw_episode([A(action_type="click", x=5000, y=1)]),
                                                aw_episode([None])])

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    with gzip.open(tmp_path / "evil.pkl.gz", "wb") as fh:
        pickle.dump([Evil()], fh)
    report = import_dataset(lake, "androidworld", [tmp_path])
    assert (report.written, report.quarantined) == (0, 4)
    reasons = sorted(r["reason"] for r in lake.sql("SELECT reason FROM quarantine").to_pylist())
    assert any("unknown action type 'unknown'" in r for r in reasons)
    assert any("outside the screen" in r for r in reasons)
    assert any("no parseable action" in r for r in reasons)
    assert any("refusing to load global builtins.print" in r for r in reasons)


def test_a_run_that_raised_is_quarantined_with_file_and_reason_and_the_rest_imported(lake, tmp_path):
    """AndroidWorld's checkpointer writes NaN (truthy) as episode_data for a run that raised."""
    A = android_world_module()
    failed = aw_episode([A(action_type="wait")])
    failed.update(episode_data=float("nan"), is_successful=float("nan"),
                  exception_info="Traceback (most recent call last): ... TimeoutError: adb")
    path = write_android_world(tmp_path / "SystemWifiTurnOff.pkl.gz",
                               [aw_episode([A(action_type="status", goal_status="complete")]), failed])
    report = import_dataset(lake, "androidworld", [tmp_path])
    assert (report.written, report.quarantined) == (1, 1)
    (row,) = lake.sql("SELECT origin, locator, reason, payload FROM quarantine").to_pylist()
    assert row["origin"] == str(path) and row["locator"] == "episode 1"
    assert "episode_data is NaN" in row["reason"] and "TimeoutError" in row["reason"]
    assert b"SystemWifiTurnOff" in row["payload"]
