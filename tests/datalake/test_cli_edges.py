"""Rough edges of `phoneloop lake` met on the way in: csv line endings, bad --as-of, screen sizes."""

import json

import pytest
from typer.testing import CliRunner

from phoneloop.cli import app
from tests.factory import png, record, write_jsonl

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def lake_dir(tmp_path):
    lake = tmp_path / "lake"
    invoke("lake", "init", "--lake", lake)
    path = write_jsonl(tmp_path / "in.jsonl", [record(k, tmp_path) for k in range(3)])
    assert invoke("lake", "import", path, "--lake", lake).exit_code == 0
    return lake


def test_csv_output_ends_lines_with_newline_so_ids_pipe_into_show(lake_dir):
    out = invoke("lake", "sql", "SELECT episode_id FROM episodes ORDER BY 1", "--lake", lake_dir, "--format", "csv")
    assert out.exit_code == 0 and "\r" not in out.stdout
    ids = out.stdout.split("\n")[1:-1]
    assert len(ids) == 3
    shown = invoke("lake", "show", ids[0], "--lake", lake_dir, "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["episode_id"] == ids[0]


@pytest.mark.parametrize("as_of, message", [
    ('{"episodes": 99}', "table 'episodes' has no version 99; latest is version 1"),
    ('{"episodes": 0', "--as-of is not valid JSON"),
    ("last tuesday", "is not an ISO 8601 time"),
    ('{"nope": 1}', "names no table 'nope'"),
    ('{"episodes": "one"}', "must be a non-negative integer"),
    ('{"episodes": -1}', "must be a non-negative integer"),
])
def test_bad_as_of_is_a_one_line_error(lake_dir, as_of, message):
    out = invoke("lake", "sql", "SELECT count(*) FROM episodes", "--lake", lake_dir, "--as-of", as_of)
    assert out.exit_code == 2, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert message in " ".join(out.output.split()) and "Traceback" not in out.output


@pytest.mark.parametrize("size, accepted", [((108, 240), True), ((240, 108), True), ((100, 200), False),
                                            ((108, 241), False)])
def test_screenshot_must_match_the_device_as_given_or_rotated(lake, tmp_path, size, accepted):
    from datalake.interchange import import_jsonl

    rec = record(1, tmp_path, n_steps=1)
    (tmp_path / rec["steps"][0]["screenshot"]).write_bytes(png(5, size))
    rec["steps"][0]["action"] = {"type": "tap", "x": 1, "y": 1}
    report = import_jsonl(lake, write_jsonl(tmp_path / "e.jsonl", [rec]))
    assert (report.written, report.quarantined) == ((1, 0) if accepted else (0, 1))
    if not accepted:
        (reason,) = lake.sql("SELECT reason FROM quarantine").column(0).to_pylist()
        assert f"screenshot is {size[0]}x{size[1]}, but the episode's device is 108x240" in reason
