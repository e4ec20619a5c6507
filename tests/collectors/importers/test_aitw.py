"""Android in the Wild: per-step Examples grouped into episodes, (y, x) -> pixels, the dataset's tap rule."""

import json
import zlib

import pytest

from collectors.importers import import_dataset, protos
from collectors.importers.tfrecord import frame
from tests.collectors.importers.formats import aitw_step, write_tfrecord


def rows(lake, sql):
    return lake.sql(sql).to_pylist()


def actions_of(lake, episode_id):
    return [json.loads(r["action_json"]) for r in
            rows(lake, f"SELECT action_json FROM steps WHERE episode_id = '{episode_id}' ORDER BY step_index")]


@pytest.mark.parametrize("touch,lift,expected", [
    ((0.25, 0.75), (0.25, 0.75), {"type": "tap", "x": 810, "y": 600}),
    ((0.25, 0.75), (0.27, 0.78), {"type": "tap", "x": 810, "y": 600}),      # 0.036 apart: still a tap
    ((0.80, 0.50), (0.20, 0.50), {"type": "swipe", "x": 540, "y": 1920, "x2": 540, "y2": 480}),
    ((0.50, 0.10), (0.50, 0.141), {"type": "swipe", "x": 108, "y": 1200, "x2": 152, "y2": 1200}),  # 0.041 apart
])
def test_dual_point_becomes_tap_or_swipe_in_device_pixels(lake, tmp_path, touch, lift, expected):
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("e1", 0, 1, 4, touch, lift)])
    report = import_dataset(lake, "aitw", [path])
    assert report.written == 1 and report.quarantined == 0
    assert actions_of(lake, "aitw-e1") == [expected]


def test_every_action_type_maps_and_episode_spans_files(lake, tmp_path):
    steps = [aitw_step("e2", 0, 6, 3, text="hello"), aitw_step("e2", 1, 6, 5), aitw_step("e2", 2, 6, 6),
             aitw_step("e2", 3, 6, 7), aitw_step("e2", 4, 6, 4, (0.5, 0.5), (0.5, 0.5)),
             aitw_step("e2", 5, 6, 10)]
    a = write_tfrecord(tmp_path / "a.tfrecord.gz", steps[:3] + [aitw_step("e3", 0, 1, 11)])
    b = write_tfrecord(tmp_path / "b.tfrecord.gz", steps[3:])
    report = import_dataset(lake, "aitw", [a, b], split="train")
    assert (report.written, report.quarantined) == (2, 0)
    assert actions_of(lake, "aitw-e2") == [
        {"type": "input_text", "text": "hello"}, {"type": "key", "key": "back"}, {"type": "key", "key": "home"},
        {"type": "key", "key": "enter"}, {"type": "tap", "x": 540, "y": 1200}, {"type": "terminate", "status": "success"}]
    assert actions_of(lake, "aitw-e3") == [{"type": "terminate", "status": "infeasible"}]
    ep = lake.episode("aitw-e2")
    assert ep.source == "public" and ep.instruction == "turn on wifi" and (ep.device.width, ep.device.height) == (1080, 2400)
    assert ep.meta["dataset"] == {"name": "aitw", "split": "train", "episode_id": "e2",
                                  "files": ["a.tfrecord.gz", "b.tfrecord.gz"]}
    assert ep.device.extra == {"device_type": "pixel_6", "android_api_level": 31}
    first = ep.steps[0].meta
    assert first["original"] == {"action_type": 3, "action_name": "TYPE", "yx_touch": [-1.0, -1.0],
                                 "yx_lift": [-1.0, -1.0], "type_action": "hello"}
    assert first["ui_annotations"] == [{"text": "Wi-Fi", "type": "TEXT", "bounds": [216, 240, 540, 360]}]


def test_bad_records_are_quarantined_and_the_rest_imported(lake, tmp_path):
    good = aitw_step("ok", 0, 1, 10)
    corrupt = bytearray(frame(aitw_step("crc", 0, 1, 10)))
    corrupt[40] ^= 0xFF
    records = [aitw_step("unk", 0, 1, 42), aitw_step("off", 0, 1, 4, (1.2, 0.5), (1.2, 0.5)), good]
    path = tmp_path / "mixed.tfrecord"
    path.write_bytes(b"".join(frame(r) for r in records) + bytes(corrupt) + frame(b"not a proto \xff\xff"))
    report = import_dataset(lake, "aitw", [path])
    assert report.written == 1 and report.quarantined == 4
    q = rows(lake, "SELECT origin, locator, episode_id, reason, payload FROM quarantine ORDER BY locator")
    reasons = {r["locator"]: r["reason"] for r in q}
    assert all(r["origin"] == str(path) and r["reason"].startswith("aitw: ") for r in q)
    assert "unknown action type 42" in reasons["record 0 at byte 0"]
    assert "outside [0, 1]" in reasons[next(k for k in reasons if k.startswith("record 1 "))]
    assert any("data CRC mismatch" in r for r in reasons.values())
    assert any("not a tf.train.Example" in r or "missing feature" in r for r in reasons.values())
    assert {r["payload"] for r in q if r["episode_id"] == "aitw-unk"} == {records[0]}


def test_incomplete_episode_is_quarantined_step_by_step(lake, tmp_path):
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("e", 0, 3, 5), aitw_step("e", 2, 3, 10)])
    report = import_dataset(lake, "aitw", [path])
    assert (report.written, report.quarantined) == (0, 2)
    reasons = [r["reason"] for r in rows(lake, "SELECT reason FROM quarantine")]
    assert all("incomplete" in r and "missing [1]" in r for r in reasons)


def test_reimport_adds_nothing(lake, tmp_path):
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step(f"e{i}", 0, 1, 10) for i in range(3)])
    assert import_dataset(lake, "aitw", [path]).written == 3
    versions = lake.versions()
    again = import_dataset(lake, "aitw", [path])
    assert (again.written, again.skipped, again.quarantined) == (0, 3, 0)
    assert lake.versions() == versions


def test_screenshot_size_is_read_from_the_png(lake, tmp_path):
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("small", 0, 1, 4, (0.25, 0.75), (0.25, 0.75),
                                                                 size=(720, 1280))])
    import_dataset(lake, "aitw", [path])
    assert actions_of(lake, "aitw-small") == [{"type": "tap", "x": 540, "y": 320}]
    assert protos.features(aitw_step("x", 0, 1, 10))["results/action_type"] == [10]


def test_a_repeated_step_is_quarantined_not_overwritten(lake, tmp_path):
    twice = aitw_step("d", 0, 2, 5)
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [twice, aitw_step("d", 0, 2, 6), aitw_step("d", 1, 2, 10)])
    report = import_dataset(lake, "aitw", [path])
    assert (report.written, report.quarantined) == (1, 1)
    assert [a["type"] for a in actions_of(lake, "aitw-d")] == ["key", "terminate"]
    assert actions_of(lake, "aitw-d")[0] == {"type": "key", "key": "back"}
    (row,) = lake.sql("SELECT reason, locator FROM quarantine").to_pylist()
    assert "step_id 0 twice" in row["reason"] and row["locator"].startswith("record 1 ")


def test_raw_pixels_become_a_png_of_the_same_image(lake, tmp_path):
    import io

    import numpy as np
    from PIL import Image

    from tests.collectors.importers.formats import raw_pixels

    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("px", 0, 1, 10, size=(64, 128))])
    import_dataset(lake, "aitw", [path])
    png = lake.episode("aitw-px").steps[0].observation.screenshot
    decoded = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    expected = np.frombuffer(raw_pixels(zlib.crc32(b"px/0"), (64, 128)), np.uint8).reshape(128, 64, 3)
    assert decoded.shape == (128, 64, 3) and (decoded == expected).all()


def test_png_bytes_are_kept_and_bad_pixel_buffers_are_quarantined(lake, tmp_path):
    from tests.factory import corrupt_png, png

    as_png = png(3, (1080, 2400))
    records = [aitw_step("png", 0, 1, 10, image=as_png), aitw_step("short", 0, 1, 10, image=b"\x00" * 100),
               aitw_step("corrupt", 0, 1, 10, image=corrupt_png(4))]
    report = import_dataset(lake, "aitw", [write_tfrecord(tmp_path / "a.gz", records)])
    assert (report.written, report.quarantined) == (1, 2)
    assert lake.episode("aitw-png").steps[0].observation.screenshot == as_png
    reasons = {r["episode_id"]: r["reason"] for r in lake.sql("SELECT * FROM quarantine").to_pylist()}
    assert "not the raw 2400x1080x3 pixels" in reasons["aitw-short"]
    assert "CRC mismatch" in reasons["aitw-corrupt"]


def test_an_episode_spanning_two_shards_imported_one_at_a_time_is_resumed(lake, tmp_path):
    steps = [aitw_step("span", k, 3, 5 if k < 2 else 10) for k in range(3)]
    a = write_tfrecord(tmp_path / "general-00000-of-00002", [aitw_step("a", 0, 1, 10)] + steps[:2])
    b = write_tfrecord(tmp_path / "general-00001-of-00002", steps[2:] + [aitw_step("b", 0, 1, 10)])
    first = import_dataset(lake, "aitw", [a])
    assert (first.written, first.quarantined, first.held) == (1, 0, 2)
    assert any("aitw-span" in n for n in first.notes)
    assert import_dataset(lake, "aitw", [a]).quarantined == 0  # a rerun of the same shard holds nothing twice
    second = import_dataset(lake, "aitw", [b])
    assert (second.written, second.quarantined, second.held) == (2, 0, 0)
    assert [x["type"] for x in actions_of(lake, "aitw-span")] == ["key", "key", "terminate"]
    assert lake.episode("aitw-span").meta["dataset"]["files"] == [a.name, b.name]


def test_shards_imported_in_reverse_order_complete_the_episode(lake, tmp_path):
    steps = [aitw_step("rev", k, 4, 6 if k < 3 else 10) for k in range(4)]
    a = write_tfrecord(tmp_path / "s0", steps[:1])
    b = write_tfrecord(tmp_path / "s1", steps[1:])
    assert import_dataset(lake, "aitw", [b]).held == 3
    report = import_dataset(lake, "aitw", [a])
    assert (report.written, report.quarantined) == (1, 0)
    assert len(actions_of(lake, "aitw-rev")) == 4
