import filecmp
import json
from importlib import resources
from pathlib import Path

import pytest

from datalake.interchange import export_jsonl, import_jsonl
from tests.factory import H, W, corrupt_png, record, truncated_png, ui_tree, write_jsonl

SAMPLE = Path(str(resources.files("phoneloop") / "sample"))


def count(lake, table):
    return lake.sql(f"SELECT count(*) FROM {table}").column(0)[0].as_py()


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(same_tree(a / d, b / d) for d in cmp.common_dirs) and all(
        (a / f).read_bytes() == (b / f).read_bytes() for f in cmp.common_files)


def test_sample_import_then_export_is_byte_exact(lake, tmp_path):
    report = import_jsonl(lake, SAMPLE / "episodes.jsonl")
    assert report.written == 6 and report.quarantined == 0
    export_jsonl(lake, tmp_path / "out")
    assert (tmp_path / "out" / "episodes.jsonl").read_bytes() == (SAMPLE / "episodes.jsonl").read_bytes()
    assert same_tree(tmp_path / "out", SAMPLE)


def test_export_of_a_reimport_is_byte_exact_for_any_input(lake, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    recs = [record(i, src) for i in range(5)]
    recs[2]["steps"][0]["thought"] = "ünïcode ✓"
    recs[3]["meta"] = {"collector": "adb", "tags": ["a", "b"]}
    write_jsonl(src / "in.jsonl", recs)
    import_jsonl(lake, src / "in.jsonl")
    export_jsonl(lake, tmp_path / "a")
    from datalake.lake import Lake
    second = Lake.init(tmp_path / "lake2")
    import_jsonl(second, tmp_path / "a" / "episodes.jsonl")
    export_jsonl(second, tmp_path / "b")
    assert same_tree(tmp_path / "a", tmp_path / "b")
    first = json.loads((tmp_path / "a" / "episodes.jsonl").read_text().splitlines()[2])
    assert first["steps"][0]["thought"] == "ünïcode ✓" and first["instruction"] == "task 2"


def test_export_where_selects_episodes(lake, tmp_path):
    import_jsonl(lake, SAMPLE / "episodes.jsonl")
    n = export_jsonl(lake, tmp_path / "out", where="source = 'human' AND outcome = 'success'")
    lines = (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()
    assert n == len(lines) == 2
    assert all(json.loads(line)["source"] == "human" for line in lines)


def _bad_cases(folder: Path) -> dict[str, tuple[object, str]]:
    """name -> (line to import, expected reason fragment)."""
    (folder / "frames").mkdir(parents=True, exist_ok=True)
    (folder / "frames" / "trunc.png").write_bytes(truncated_png(1))
    (folder / "frames" / "corrupt.png").write_bytes(corrupt_png(2))
    (folder / "frames" / "text.png").write_bytes(b"this is not an image")
    (folder / "secret.png").write_bytes(b"x")

    def with_step(seed, **step):
        rec = record(seed, folder, n_steps=1)
        rec["steps"][0].update(step)
        return rec

    no_instruction = record(20, folder)
    del no_instruction["instruction"]
    no_action = record(21, folder)
    del no_action["steps"][1]["action"]
    return {
        "truncated png": (with_step(10, screenshot="frames/trunc.png"), "truncated"),
        "corrupt png": (with_step(11, screenshot="frames/corrupt.png"), "CRC mismatch"),
        "unreadable png": (with_step(12, screenshot="frames/text.png"), "not a PNG"),
        "missing png file": (with_step(13, screenshot="frames/absent.png"), "cannot be read"),
        "unknown action": (with_step(14, action={"type": "teleport", "x": 1, "y": 1}), "unknown action type"),
        "tap outside screen": (with_step(15, action={"type": "tap", "x": 5, "y": H + 10}), "outside the"),
        "missing instruction": (no_instruction, "missing required field 'instruction'"),
        "missing action": (no_action, "step 1 is missing required field 'action'"),
        "missing device size": (record(22, folder, device={"width": W}), "missing required field 'height'"),
        "non-UTF-8 bytes": (json.dumps(record(23, folder)).encode().replace(b"task 23", b"task \xff\xfe"),
                            "not valid UTF-8"),
        "lone surrogate": (with_step(24, thought="\ud800"), "not valid UTF-8"),
        "oversized ui tree": (with_step(25, ui_tree=ui_tree("x" * 5000)), "over the 4096-byte limit"),
        "malformed ui tree": (with_step(26, ui_tree="<hierarchy><node"), "not well-formed XML"),
        "invalid json": (b'{"instruction": "x", ', "not valid JSON"),
        "not an object": (b"[1, 2]", "must be a JSON object"),
        "path traversal": (with_step(27, screenshot="../secret.png"), "leaves the folder"),
        "absolute path": (with_step(28, screenshot="/etc/passwd"), "must be relative"),
        "unknown field": (record(29, folder, colour="blue"), "unknown episode field(s): colour"),
    }


CASES = sorted(_bad_cases(Path("/tmp/_phoneloop_case_names")).keys())


@pytest.mark.parametrize("case", CASES)
def test_bad_record_goes_to_quarantine_with_its_reason(lake, tmp_path, case):
    folder = tmp_path / "in" / "data"
    line, reason = _bad_cases(folder)[case]
    good = [record(1, folder), record(2, folder)]
    write_jsonl(folder / "in.jsonl", [good[0], line, good[1]])
    report = import_jsonl(lake, folder / "in.jsonl", max_ui_tree_bytes=4096)
    assert (report.written, report.quarantined) == (2, 1)
    rows = lake.sql("SELECT reason, locator, payload, origin FROM quarantine").to_pylist()
    assert len(rows) == 1
    assert reason in rows[0]["reason"], rows[0]["reason"]
    assert rows[0]["locator"] == "line 2"
    expected = line if isinstance(line, bytes) else json.dumps(line).encode()
    assert rows[0]["payload"] == expected  # the raw payload, byte for byte
    assert count(lake, "episodes") == 2


def test_quarantine_never_touches_committed_data(lake, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [record(i, folder) for i in range(3)])
    import_jsonl(lake, folder / "a.jsonl")
    before = lake.sql("SELECT * FROM episodes ORDER BY episode_id").to_pylist()
    steps_before = lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist()
    write_jsonl(folder / "b.jsonl", [b"garbage", record(1, folder, steps="not a list")])
    report = import_jsonl(lake, folder / "b.jsonl")
    assert report.quarantined == 2 and report.written == 0
    assert lake.sql("SELECT * FROM episodes ORDER BY episode_id").to_pylist() == before
    assert lake.sql("SELECT * FROM steps ORDER BY episode_id, step_index").to_pylist() == steps_before


def test_duplicate_episode_id_in_one_file_is_quarantined(lake, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [record(1, folder, episode_id="e1"), record(2, folder, episode_id="e1")])
    report = import_jsonl(lake, folder / "a.jsonl")
    assert (report.written, report.quarantined) == (1, 1)
    assert "appears more than once" in report.reasons[0]


def test_reimporting_a_file_is_idempotent(lake, tmp_path):
    first = import_jsonl(lake, SAMPLE / "episodes.jsonl")
    second = import_jsonl(lake, SAMPLE / "episodes.jsonl")
    assert (first.written, second.written, second.skipped) == (6, 0, 6)
    assert count(lake, "episodes") == 6


def test_import_commits_in_batches(lake, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [record(i, folder) for i in range(7)])
    before = lake.versions()["episodes"]
    import_jsonl(lake, folder / "a.jsonl", batch_episodes=3)
    assert lake.versions()["episodes"] == before + 3  # 3 + 3 + 1
