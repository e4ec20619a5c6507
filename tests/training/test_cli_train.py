import json

from typer.testing import CliRunner

from phoneloop.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_train_sft_command_trains_and_registers(train_lake, tiny_path):
    result = invoke("train", "sft", "--dataset", "memo@v1", "--output", "cli-sft", "--max-steps", 2,
                    "--batch-size", 2, "--lake", train_lake.uri)
    assert result.exit_code == 0, result.output
    listed = invoke("train", "models", "cli-sft", "--json", "--lake", train_lake.uri)
    rows = json.loads(listed.stdout)
    assert [r["name"] for r in rows] == ["cli-sft"] and rows[0]["dataset"] == "memo@v1"


def test_train_sft_balance_option_is_recorded_and_bad_values_are_named(train_lake, tiny_path):
    result = invoke("train", "sft", "--dataset", "clock@v1", "--output", "cli-balanced", "--max-steps", 1,
                    "--batch-size", 2, "--balance", "task", "--lake", train_lake.uri)
    assert result.exit_code == 0, result.output
    rows = json.loads(invoke("train", "models", "cli-balanced", "--json", "--lake", train_lake.uri).stdout)
    config = json.loads(rows[0]["config_json"])
    assert config["balanced_by"] == "task" and config["rows"] == config["rows_before_balance"] > 0  # one task
    bad = invoke("train", "sft", "--dataset", "clock@v1", "--output", "x", "--balance", "seed", "--lake",
                 train_lake.uri)
    assert bad.exit_code == 2 and "balance must be one of task, app (got 'seed')" in bad.output


def test_train_sft_command_reports_missing_dataset_version(train_lake):
    result = invoke("train", "sft", "--dataset", "memo@v7", "--output", "x", "--lake", train_lake.uri)
    assert result.exit_code == 2
    assert "no dataset 'memo@v7'" in result.output


def test_train_grpo_command_reports_wrong_export_kind(train_lake):
    result = invoke("train", "grpo", "--dataset", "eponly@v1", "--output", "x", "--lake", train_lake.uri)
    assert result.exit_code == 2
    assert "has no 'grpo' export" in result.output


def test_train_commands_have_help():
    for cmd in ("sft", "grpo", "models", "tiny"):
        result = invoke("train", cmd, "--help")
        assert result.exit_code == 0 and "Example:" in result.output
