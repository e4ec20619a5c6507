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


def test_rollout_sends_the_endpoint_options_and_summarises_policy_errors(lake, monkeypatch):
    from tests.rollout.chat_server import ChatServer

    hotkey = "Thought: press enter to search\nAction: hotkey(key='enter')"
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    with ChatServer(lambda body: hotkey, faults=lambda n: "500" if n >= 2 else None) as server:
        done = invoke("rollout", "--policy", server.url, "--model", "ui-tars-7b", "--style", "uitars",
                      "--tasks", "SettingsWifiOn", "--phones", "mock:1", "--max-steps", "4", "--retries", "1",
                      "--timeout", "2", "--temperature", "0.3", "--max-tokens", "77", "--header", "X-Team: phone",
                      "--lake", lake.uri)
        first, headers = server.requests[0], server.headers_seen[0]
    assert done.exit_code == 0, done.output
    assert "policy errors: 1 episode(s)" in done.output and "1 request(s) retried" in done.output
    assert (first["model"], first["temperature"], first["max_tokens"]) == ("ui-tars-7b", 0.3, 77)
    assert headers["Authorization"] == "Bearer from-env" and headers["X-Team"] == "phone"
    system = first["messages"][0]["content"][0]["text"]
    assert "hotkey(key=" in system and "finished(content=" in system and "tool_call" not in system
    from datalake.lake import Lake

    steps = Lake.open(lake.uri).sql("SELECT action_json FROM steps ORDER BY step_index").column(0).to_pylist()
    assert [json.loads(s) for s in steps] == [{"type": "key", "key": "enter"}] * 2  # then the endpoint went down


def test_a_bad_header_is_named(lake):
    result = invoke("rollout", "--policy", "random", "--header", "no-colon", "--lake", lake.uri)
    assert result.exit_code == 2 and "--header must be NAME:VALUE" in result.output
