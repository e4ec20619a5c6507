import json

from typer.testing import CliRunner

from phoneloop.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_rollout_and_eval_commands(lake):
    done = invoke("rollout", "--policy", "oracle", "--tasks", "ClockAddAlarm", "--phones", "mock:1",
                  "--episodes", "2", "--round", "1", "--lake", lake.uri, "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["episodes"] == 2 and out["success_rate"] == 1.0
    compared = invoke("eval", "--policies", "oracle,random", "--tasks", "ClockAddAlarm", "--phones", "mock:1",
                      "--lake", lake.uri, "--json")
    assert compared.exit_code == 0, compared.output
    table = json.loads(compared.stdout)["by_category"]["single-app"]
    assert table["oracle"]["rate"] == 1.0 and table["random"]["rate"] == 0.0


def test_rollout_rejects_a_bad_phones_spec(lake):
    result = invoke("rollout", "--policy", "oracle", "--phones", "usb:3", "--lake", lake.uri)
    assert result.exit_code == 2 and "mock:N" in result.output
