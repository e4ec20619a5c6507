"""`--locale zh-CN` on `phoneloop tasks ...` and `collect mock`: Chinese screens and instructions,
``meta.locale`` in the lake, and a clear error for a locale the phone does not speak."""

import json

import pytest
from typer.testing import CliRunner

from datalake.lake import Lake
from mockphone.i18n import has_cjk
from phoneloop.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_tasks_show_in_zh_cn_prints_a_chinese_instruction_and_writes_a_chinese_screen(tmp_path):
    xml = tmp_path / "start.xml"
    result = invoke("tasks", "show", "SettingsRingMode", "--locale", "zh-CN", "--xml", xml, "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["locale"] == "zh-CN" and has_cjk(info["instruction"]) and info["oracle"]
    assert "设置" in xml.read_text(encoding="utf-8")


def test_tasks_list_in_zh_cn_gives_every_row_a_chinese_instruction():
    result = invoke("tasks", "list", "--app", "clock", "--instances", "1", "--locale", "zh-CN", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows and all(has_cjk(r["instruction"]) and r["locale"] == "zh-CN" for r in rows)


def test_tasks_check_holds_every_invariant_in_zh_cn():
    result = invoke("tasks", "check", "--tasks", "SettingsRingMode,ClockDeleteAlarm,MessagesReplyUnread", "--seeds",
                    "1", "--locale", "zh-CN", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["locale"] == "zh-CN" and summary["failures"] == [] and summary["fuzz"]["pairs"] > 0


def test_unknown_locale_is_a_clear_error():
    result = invoke("tasks", "show", "SettingsWifiOff", "--locale", "fr-FR")
    assert result.exit_code == 2 and "unknown locale 'fr-FR'" in result.output and "zh-CN" in result.output


def test_collect_mock_in_zh_cn_records_the_locale(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    result = invoke("collect", "mock", "--tasks", "SettingsWifiOff,NotesCreate", "--episodes", "2", "--locale",
                    "zh-CN", "--lake", lake.uri, "--json")
    assert result.exit_code == 0, result.output
    rows = lake.sql("select instruction, outcome, meta_json from episodes").to_pylist()
    assert len(rows) == 2 and {r["outcome"] for r in rows} == {"success"}
    for r in rows:
        assert json.loads(r["meta_json"])["locale"] == "zh-CN" and has_cjk(r["instruction"])
    screens = lake.sql("select ui_tree from steps").to_pylist()
    assert any("设置" in s["ui_tree"] or "备忘录" in s["ui_tree"] for s in screens)


def test_rollout_in_zh_cn_runs_chinese_episodes_and_eval_takes_the_option(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    result = invoke("rollout", "--policy", "oracle", "--phones", "mock:1", "--tasks", "SettingsBluetoothOn",
                    "--episodes", "1", "--locale", "zh-CN", "--lake", lake.uri, "--json")
    assert result.exit_code == 0, result.output
    row = lake.sql("select instruction, outcome, meta_json from episodes").to_pylist()[0]
    assert row["instruction"] == "打开蓝牙。" and row["outcome"] == "success"
    assert json.loads(row["meta_json"])["locale"] == "zh-CN"
    bad = invoke("eval", "--policies", "oracle", "--phones", "mock:1", "--tasks", "SettingsBluetoothOn",
                 "--episodes", "1", "--locale", "xx", "--lake", lake.uri)
    assert bad.exit_code == 2 and "unknown locale 'xx'" in bad.output


def test_locale_needs_mock_phones():
    from rollout.errors import PhonesSpecError
    from rollout.runner import _check_locale

    _check_locale("mock", "zh-CN")
    _check_locale("adb", "en-US")
    with pytest.raises(PhonesSpecError, match="mock phones"):
        _check_locale("adb", "zh-CN")
