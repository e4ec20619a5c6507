"""`phoneloop env serve`: an OpenEnv client in this process drives mock phones served by another process."""

import base64

import pytest

from datalake.types import Action
from mockphone.layout import Display
from mockphone.openenv_env import MockPhoneClient, PhoneAction
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY
from tests.mockphone.served import env_server


@pytest.fixture(scope="module")
def server():
    with env_server("--tasks", "app:clock,SettingsWifiOff", "--max-steps", "40") as url:
        yield url


def test_client_resets_steps_and_gets_the_verifiers_reward(server):
    mirror = MockPhone(seed=4)  # the same deterministic phone, here, to plan the oracle's actions
    task = REGISTRY["ClockAddAlarm"](seed=4)
    task.initialize_task(mirror)
    actions = solve(mirror, task)  # ends with terminate(success)
    with MockPhoneClient(base_url=server).sync() as env:
        result = env.reset(task="ClockAddAlarm", task_seed=4)
        assert result.observation.instruction == task.goal and result.reward == 0.0 and not result.done
        assert base64.b64decode(result.observation.screenshot_png_b64)[:8] == b"\x89PNG\r\n\x1a\n"
        for i, action in enumerate(actions):
            result = env.step(PhoneAction(action=action.to_dict()))
            assert result.done == (i == len(actions) - 1)
        assert result.reward == 1.0 and result.observation.score == 1.0 and result.observation.terminated
        state = env.state()
        assert (state.task, state.seed, state.step_count, state.done) == ("ClockAddAlarm", 4, len(actions), True)


def test_claiming_success_over_the_wire_scores_zero(server):
    with MockPhoneClient(base_url=server).sync() as env:
        env.reset(task="SettingsWifiOff", task_seed=0)
        result = env.step(PhoneAction(action=Action("terminate", status="success").to_dict()))
        assert result.done and result.reward == 0.0


def test_screens_match_a_local_phone_and_bad_actions_are_refused(server):
    with MockPhoneClient(base_url=server).sync() as env:
        first = env.reset(task="SettingsWifiOff", task_seed=2)
        local = MockPhone(seed=2, display=Display())
        REGISTRY["SettingsWifiOff"](seed=2).initialize_task(local)
        assert first.observation.ui_xml == local.ui_tree()
        with pytest.raises(Exception, match="unknown action type 'fly'"):
            env.step(PhoneAction(action={"type": "fly"}))
        after = env.step(PhoneAction(action={"type": "wait", "seconds": 0}))
        assert after.observation.ui_xml == first.observation.ui_xml and env.state().step_count == 1


def test_bad_actions_are_refused_before_they_reach_the_server():
    with pytest.raises(ValueError, match="not a valid action"):
        PhoneAction(action={"type": "tap"})


def test_serve_refuses_an_unknown_profile():
    from typer.testing import CliRunner

    from phoneloop.cli import app

    result = CliRunner().invoke(app, ["env", "serve", "--perturb", "stormy"])
    assert result.exit_code == 2 and "none, light, real-like, heavy" in " ".join(result.output.split())


def test_only_client_models_failing_are_422s_a_server_models_failure_is_a_500():
    from fastapi.testclient import TestClient
    from pydantic import BaseModel

    from mockphone.openenv_app import make_app

    class Internal(BaseModel):
        n: int

    app = make_app(tasks="app:clock", width=540, height=1200, dpi=210)

    @app.get("/internal")
    def internal():
        Internal(n="not a number")

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/internal").status_code == 500
        refused = client.post("/reset", json={"task": "NotesCreate"})
        assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "task"]
