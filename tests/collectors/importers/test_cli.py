"""`phoneloop lake import --format NAME PATH...`: counts, exit codes, resume."""

import json

from typer.testing import CliRunner

from phoneloop.cli import app
from tests.collectors.importers.formats import aitw_step, write_tfrecord

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_import_with_bad_records_exits_non_zero_with_counts_and_resumes(tmp_path):
    lake = tmp_path / "lake"
    invoke("lake", "init", "--lake", lake)
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("e1", 0, 1, 10), aitw_step("e2", 0, 1, 99)])
    out = invoke("lake", "import", "--format", "aitw", path, "--lake", lake, "--json")
    assert out.exit_code == 1, out.output
    summary = json.loads(out.stdout)
    assert (summary["dataset"], summary["written"], summary["quarantined"]) == ("aitw", 1, 1)
    assert "unknown action type 99" in summary["reasons"][0] and str(path) in summary["reasons"][0]
    again = json.loads(invoke("lake", "import", "--format", "aitw", path, "--lake", lake, "--json").stdout)
    assert (again["written"], again["skipped_existing"]) == (0, 1)


def test_clean_import_exits_zero_and_unknown_format_is_refused(tmp_path):
    lake = tmp_path / "lake"
    invoke("lake", "init", "--lake", lake)
    path = write_tfrecord(tmp_path / "a.tfrecord.gz", [aitw_step("e1", 0, 1, 10)])
    out = invoke("lake", "import", "--format", "aitw", path, "--lake", lake)
    assert out.exit_code == 0 and "1 episodes written" in out.output
    bad = invoke("lake", "import", "--format", "rico", path, "--lake", lake)
    assert bad.exit_code == 2 and "--format must be jsonl or one of" in bad.output
    missing = invoke("lake", "import", "--format", "aitw", tmp_path / "nope.gz", "--lake", lake)
    assert missing.exit_code == 2 and "no such file" in missing.output
