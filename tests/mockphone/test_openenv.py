"""`phoneloop env serve`: an OpenEnv client in this process drives mock phones served by another process."""

import base64
import os
import subprocess
import sys
import time

import httpx
import pytest

from datalake.types import Action
from mockphone.layout import Display
from mockphone.openenv_env import MockPhoneClient, PhoneAction
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import REGISTRY
from tests.adb.helpers import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def server():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "env", "serve", "--port", str(port),
                             "--tasks", "app:clock,SettingsWifiOff", "--max-steps", "40"],
                            env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
        assert proc.poll() is None, proc.stdout.read().decode()
    yield url
    proc.terminate()
    proc.wait(timeout=20)


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


def test_screens_match_a_local_phone_and_bad_actions_do_nothing(server):
    with MockPhoneClient(base_url=server).sync() as env:
        first = env.reset(task="SettingsWifiOff", task_seed=2)
        local = MockPhone(seed=2, display=Display())
        REGISTRY["SettingsWifiOff"](seed=2).initialize_task(local)
        assert first.observation.ui_xml == local.ui_tree()
        bad = env.step(PhoneAction(action={"type": "fly"}))
        assert bad.observation.error and bad.reward == 0.0 and bad.observation.ui_xml == first.observation.ui_xml


def test_serve_refuses_an_unknown_profile():
    from typer.testing import CliRunner

    from phoneloop.cli import app

    result = CliRunner().invoke(app, ["env", "serve", "--perturb", "stormy"])
    assert result.exit_code == 2 and "none, light, real-like, heavy" in " ".join(result.output.split())
