import http.client
import json
import os
import subprocess
import sys
import time

from typer.testing import CliRunner

from phoneloop.cli import app
from tests.api.conftest import free_port


def test_serve_runs_a_real_server_on_127_0_0_1(shared_lake):
    port = free_port()
    env = {**os.environ, "PHONELOOP_LAKE": shared_lake.uri}
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/health")
                response = conn.getresponse()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "phoneloop serve did not answer"
                time.sleep(0.1)
        assert response.status == 200 and json.loads(response.read())["lake"] == "lake"
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_refuses_a_missing_lake(tmp_path):
    result = CliRunner().invoke(app, ["serve", "--lake", str(tmp_path / "none")])
    assert result.exit_code == 2 and "phoneloop lake init" in result.output


def test_serve_refuses_bad_settings(shared_lake, monkeypatch):
    monkeypatch.setenv("PHONELOOP_API_AUTH_READS", "1")
    monkeypatch.delenv("PHONELOOP_API_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--lake", shared_lake.uri])
    assert result.exit_code == 2 and "PHONELOOP_API_TOKEN" in result.output
