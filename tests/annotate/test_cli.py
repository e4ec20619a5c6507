"""`phoneloop annotate ...` against the session's Label Studio."""

import json

import pytest
from typer.testing import CliRunner

from phoneloop.cli import app
from tests.factory import episode

runner = CliRunner()


def invoke(*args, env=None):
    return runner.invoke(app, ["annotate", *map(str, args)], env=env)


@pytest.fixture
def configured(label_studio, monkeypatch):
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("PHONELOOP_LABEL_STUDIO_TOKEN", label_studio.token)
    return label_studio


@pytest.mark.slow  # > 20 s on 2 cores
def test_serve_json_reuses_the_running_server(label_studio, ls_lake):
    result = invoke("serve", "--lake", ls_lake.uri, "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert (info["url"], info["pid"], info["managed"]) == (label_studio.url, label_studio.pid, True)


def test_push_pull_and_status_through_a_configured_server(configured, lake, project, ls_lake):
    lake.write_episodes([episode(seed=21, n_steps=2, outcome="failure")])
    pushed = invoke("push", "--lake", lake.uri, "--project", project, "--preset", "failed", "--json")
    assert pushed.exit_code == 0, pushed.output
    report = json.loads(pushed.output)
    assert report["pushed"] == 2
    with configured.client() as client:
        task = client.tasks(report["project_id"])[0]
        client.create_annotation(task["id"], [{"type": "choices", "from_name": "step_correct", "to_name": "image",
                                               "value": {"choices": ["yes"]}}])
    pulled = invoke("pull", "--lake", lake.uri, "--project", project, "--json")
    assert pulled.exit_code == 0, pulled.output
    assert json.loads(pulled.output)["written"] == 1
    status = invoke("status", "--lake", lake.uri, "--json")
    assert status.exit_code == 0, status.output
    info = json.loads(status.output)
    assert info["url"] == configured.url and info["token_file"] == "PHONELOOP_LABEL_STUDIO_TOKEN"
    (mine,) = [p for p in info["projects"] if p["title"] == project]
    assert (mine["tasks"], mine["annotations"]) == (2, 1)


def test_status_of_the_local_server_names_the_token_file(label_studio, ls_lake):
    info = json.loads(invoke("status", "--lake", ls_lake.uri, "--json").output)
    assert info["running"] and info["managed"] and info["url"] == label_studio.url
    assert info["token_file"] == label_studio.token_file


def test_pull_with_quarantined_annotations_exits_1(configured, lake, project):
    lake.write_episodes([episode(seed=22, n_steps=2, outcome="failure")])
    invoke("push", "--lake", lake.uri, "--project", project, "--preset", "failed")
    with configured.client() as client:
        task = client.tasks(client.project(project)["id"])[0]
        client.create_annotation(task["id"], [{"type": "rating", "from_name": "stars", "to_name": "image",
                                               "value": {"rating": 5}}])
    result = invoke("pull", "--lake", lake.uri, "--project", project)
    assert result.exit_code == 1
    assert "quarantined" in result.output and "stars" in result.output
    again = invoke("pull", "--lake", lake.uri, "--project", project, "--json")  # nothing new failed
    assert again.exit_code == 0, again.output
    assert (json.loads(again.output)["quarantined"], json.loads(again.output)["already_quarantined"]) == (0, 1)


def test_users_add_and_list_and_push_with_overlap(configured, lake, project):
    email = f"rev-{project}@example.com"
    added = invoke("users", "add", email, "--role", "reviewer", "--lake", lake.uri, "--json")
    assert added.exit_code == 0, added.output
    user = json.loads(added.output)
    assert user["role"] == "reviewer" and user["password"]
    again = json.loads(invoke("users", "add", email, "--role", "reviewer", "--lake", lake.uri, "--json").output)
    assert again["id"] == user["id"] and again["password"] is None  # found, not created twice
    listed = json.loads(invoke("users", "list", "--lake", lake.uri, "--json").output)
    assert {"id": user["id"], "email": email, "role": "reviewer"} in listed
    assert "role must be one of" in invoke("users", "add", "x@example.com", "--role", "boss", "--lake",
                                           lake.uri).output
    lake.write_episodes([episode(seed=23, n_steps=2, outcome="failure")])
    pushed = invoke("push", "--lake", lake.uri, "--project", project, "--preset", "failed", "--overlap", "3", "--json")
    assert pushed.exit_code == 0, pushed.output and json.loads(pushed.output)["overlap"] == 3
    assert json.loads(pushed.output)["overlap"] == 3


@pytest.mark.parametrize("args, message", [
    (("push", "--project", "p", "--preset", "best"), "unknown preset"),
    (("push", "--project", "p", "--preset", "failed", "--where", "true"), "exactly one"),
    (("push", "--project", "p", "--preset", "failed", "--kind", "frame"), "review kind"),
    (("pull", "--project", "no-such-project"), "no Label Studio project"),
    (("webhook", "--project", "p"), "secret"),
])
def test_clear_errors(configured, lake, args, message):
    result = invoke(*args, "--lake", lake.uri)
    assert result.exit_code == 2 and message in result.output


def test_commands_without_a_server_say_how_to_start_one(lake, monkeypatch):
    monkeypatch.delenv("PHONELOOP_LABEL_STUDIO_URL", raising=False)
    result = invoke("push", "--lake", lake.uri, "--project", "p", "--preset", "failed")
    assert result.exit_code == 2 and "phoneloop annotate serve" in result.output
    assert "not running" in invoke("status", "--lake", lake.uri).output
