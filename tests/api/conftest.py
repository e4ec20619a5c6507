import json
import socket
import threading
import time
from importlib import resources
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import ApiSettings
from datalake import interchange
from datalake import schema as S
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step, Target
from tests.factory import H, W, png

TOKEN = "test-token-123"
SECRET = "hook-secret-456"
SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def settings(**overrides) -> ApiSettings:
    values = dict(token=TOKEN, webhook_secret=SECRET, refresh_s=0.0, sql_timeout_s=5.0)
    values.update(overrides)
    return ApiSettings(**values)


def gestures_episode() -> Episode:
    """One step per drawable action kind, on the factory's small screens."""
    element = Target(index=1, resource_id="com.example:id/ok", text="OK", bounds=(10, 20, 60, 50))
    actions = [Action("tap", x=30, y=35, element=element), Action("long_press", x=50, y=100),
               Action("swipe", x=50, y=200, x2=50, y2=60), Action("input_text", text="hello"),
               Action("key", key="back"), Action("terminate", status="success")]
    steps = [Step(Observation(png(900 + i), package="com.example"), a) for i, a in enumerate(actions)]
    return Episode(instruction="gestures", source="agent", device=Device(W, H), steps=tuple(steps),
                   app="demo", category="single-app", outcome="failure", verified_by="judge", policy="p1", round=2)


def step_correction(episode_id: str, step_index: int, action: dict | None, correct: bool | None = None) -> dict:
    return {"annotation_id": f"a-{episode_id[:8]}-{step_index}", "target": "step", "episode_id": episode_id,
            "step_index": step_index, "status": "accepted", "action_json": json.dumps(action) if action else None,
            "step_correct": correct, "outcome": None, "note": None, "annotator": "ann@example.com",
            "origin": "test", "created_at": S.now()}


def dataset_row(name: str = "sft-mix", version: int = 1, folder: str | None = None) -> dict:
    """A datasets row shaped like curation's: exports name the version's folder and its report."""
    exports = {"formats": {"sft": "sft/"}} | ({"path": folder, "report": "report.html"} if folder else {})
    return {"name": name, "version": version, "fingerprint": "f" * 64, "recipe": "recipes/sft.yaml",
            "parents_json": None, "table_versions_json": json.dumps({"episodes": 1, "steps": 1}),
            "counts_json": json.dumps({"episodes": 6, "steps": 20, "by_source": {"human": 2},
                                      "splits": {"train": {"episodes": 5}, "val": {"episodes": 1}},
                                      "ops": [{"op": "filter", "episodes_out": 6}]}),
            "exports_json": json.dumps(exports), "created_at": S.now()}


def build_lake(path: Path) -> Lake:
    lake = Lake.init(path)
    interchange.import_jsonl(lake, SAMPLE)
    lake.write_episodes([gestures_episode()])
    return lake


@pytest.fixture(scope="session")
def shared_lake(tmp_path_factory) -> Lake:
    """The sample plus a gestures episode with a correction, a dataset and a model; tests only read it."""
    lake = build_lake(tmp_path_factory.mktemp("api") / "lake")
    gid = gestures_episode().episode_id
    lake.append("annotations", [step_correction(gid, 0, {"type": "tap", "x": 80, "y": 150}, correct=False)])
    folder = Path(lake.uri) / "datasets" / "sft-mix" / "v1"
    folder.mkdir(parents=True)
    (folder / "report.html").write_text("<!doctype html><h1>sft-mix@v1</h1><p>kept 6 of 6 episodes</p>")
    lake.append("datasets", [dataset_row(folder=str(folder)), dataset_row(version=2)])
    lake.append("models", [{"name": "tiny-sft", "path": "ckpt/tiny", "base_model": "tiny-qwen3-vl",
                            "dataset": "sft-mix@v1", "dataset_fingerprint": "f" * 64, "parent": None,
                            "config_json": "{}", "metrics_json": json.dumps({"success_rate": 0.5}),
                            "created_at": S.now()}])
    return lake


@pytest.fixture(scope="session")
def client(shared_lake) -> TestClient:
    return TestClient(create_app(Lake.open(shared_lake.uri), settings()))


@pytest.fixture
def fresh_lake(tmp_path) -> Lake:
    """A lake of its own for tests that write."""
    return build_lake(tmp_path / "lake")


@pytest.fixture
def fresh_client(fresh_lake) -> TestClient:
    return TestClient(create_app(Lake.open(fresh_lake.uri), settings()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def live_server(shared_lake):
    """The app under a real uvicorn on 127.0.0.1 (for the browser test); yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(Lake.open(shared_lake.uri), settings()), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
