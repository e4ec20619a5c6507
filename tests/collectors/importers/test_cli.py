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


def test_tfrecord_formats_accept_a_folder_of_shards_and_note_sidecar_files(tmp_path):
    """Real shards have no extension (``general-00000-of-00321``); AndroidControl's root holds splits.json."""
    from tests.collectors.importers.formats import androidcontrol_episode

    lake = tmp_path / "lake"
    invoke("lake", "init", "--lake", lake)
    aitw = tmp_path / "aitw" / "general"
    aitw.mkdir(parents=True)
    write_tfrecord(aitw / "general-00000-of-00002", [aitw_step("e1", 0, 2, 5)])
    write_tfrecord(aitw / "general-00001-of-00002", [aitw_step("e1", 1, 2, 10), aitw_step("e2", 0, 1, 10)])
    out = invoke("lake", "import", "--format", "aitw", tmp_path / "aitw", "--lake", lake, "--json")
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert (summary["written"], summary["quarantined"]) == (2, 0)
    control = tmp_path / "android_control"
    control.mkdir()
    write_tfrecord(control / "android_control-00000-of-00001", [androidcontrol_episode(7, [{"action_type": "wait"}])])
    (control / "splits.json").write_text(json.dumps({"train": [7], "validation": [], "test": []}))
    out = invoke("lake", "import", "--format", "androidcontrol", control, "--lake", lake, "--json")
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert (summary["written"], summary["quarantined"]) == (1, 0)
    assert any("splits.json" in note for note in summary["notes"])
