import json
import socket
import threading
import time
from contextlib import contextmanager
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


@contextmanager
def serving(app):
    """The app under a real uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="session")
def live_server(shared_lake):
    """The app under a real uvicorn on 127.0.0.1 (for the browser test); yields its base URL."""
    with serving(create_app(Lake.open(shared_lake.uri), settings())) as url:
        yield url


# -- a lake a researcher debugs: a rollout with an invalid step, evaluations, dataset exports ----
ROLLOUT_ID, EVAL_ID = "r0llout00001", "eval00000001"
OUTPUTS = ['{"type": "open_app", "app": "clock"}',
           "I should tap the add button, {'type': tap, x: 500}",  # what a half-trained model says
           '{"type": "tap", "x": 5000, "y": 40}',                 # parses, but off the screen
           '{"type": "wait"}']


PERTURBATION = "light"


def rollout_episode() -> Episode:
    """A real rollout: the mock phone, the model policy's parser, the episode loop (max_steps)."""
    from mockphone.phone import MockPhone
    from mockphone.tasks import registry
    from phones.episode import run_episode
    from rollout.policies import ModelPolicy, PolicyOptions

    said = iter(OUTPUTS)
    policy = ModelPolicy("sft-r1", lambda messages, images: next(said), PolicyOptions(style="json", coords="abs"))
    task = registry.get("ClockAddAlarm")(seed=3)
    phone = MockPhone(seed=0, perturbations=PERTURBATION)  # the episode records the profile it ran under
    try:
        episode = run_episode(phone, policy, task, seed=3, max_steps=len(OUTPUTS), round=1,
                              meta={"rollout_id": ROLLOUT_ID, "eval_id": EVAL_ID})
    finally:
        phone.close()
    return episode


def eval_results(policy: str, outcomes: dict[tuple[str, int], str], ids: dict) -> list[dict]:
    return [{"task": task, "seed": seed, "episode_id": ids[(policy, task, seed)], "outcome": outcome,
             "score": 1.0 if outcome == "success" else 0.0, "category": "single-app",
             "app": "clock" if task.startswith("Clock") else "notes"} for (task, seed), outcome in outcomes.items()]


OUTCOMES = {  # (policy, task, seed) -> outcome; SFT solves more than random
    "sft-r1": {("ClockAddAlarm", 1): "success", ("ClockAddAlarm", 2): "failure", ("NotesCreate", 1): "success",
               ("NotesCreate", 2): "success"},
    "random:0": {("ClockAddAlarm", 1): "failure", ("ClockAddAlarm", 2): "failure", ("NotesCreate", 1): "success",
                 ("NotesCreate", 2): "failure"},
}


def eval_episodes() -> dict[tuple[str, str, int], Episode]:
    from tests.factory import episode

    out = {}
    for n, (policy, runs) in enumerate(OUTCOMES.items()):
        for m, ((task, seed), outcome) in enumerate(runs.items()):
            verb = "Set an alarm" if task.startswith("Clock") else "Create a note"
            out[(policy, task, seed)] = episode(
                seed=500 + 10 * n + m, instruction=f"{verb} (seed {seed})", source="rollout", task=task,
                app="clock" if task.startswith("Clock") else "notes", outcome=outcome, verified_by="verifier",
                policy=policy, purpose="eval", meta={"eval_id": EVAL_ID, "seed": seed})
    return out


def eval_rows(ids: dict) -> list[dict]:
    """Rows shaped as api/evals.py documents; the summary's numbers are deliberately not round."""
    rows = []
    for policy, runs in OUTCOMES.items():
        results = eval_results(policy, runs, ids)
        wins = sum(r["outcome"] == "success" for r in results)
        summary = {"overall": {"n": 4, "successes": wins, "rate": wins / 4, "low": 0.0123, "high": 0.9876},
                   "by_category": {"single-app": {"n": 4, "successes": wins, "rate": wins / 4, "low": 0.0123,
                                                  "high": 0.9876}},
                   "by_app": {app: {"n": 2, "successes": k, "rate": k / 2, "low": 0.0456, "high": 0.9543}
                              for app in ("clock", "notes")
                              for k in [sum(r["outcome"] == "success" for r in results if r["app"] == app)]}}
        other = "random:0" if policy == "sft-r1" else "sft-r1"
        rows.append({"eval_id": EVAL_ID, "name": "round 1: SFT vs random", "policy": policy,
                     "policy_json": json.dumps({"kind": "model" if policy == "sft-r1" else "random"}),
                     "task_set": "clock,notes", "seeds_json": "[1, 2]", "perturbation": None, "status": "ok",
                     "error": None, "episodes": 4, "successes": wins, "results_json": json.dumps(results),
                     "summary_json": json.dumps(summary),
                     "comparisons_json": json.dumps([{"against": other, "group": "overall", "pairs": 4,
                                                      "only_this": 2 if policy == "sft-r1" else 0,
                                                      "only_other": 0 if policy == "sft-r1" else 2, "both": 1,
                                                      "neither": 1, "diff": 0.5 if policy == "sft-r1" else -0.5,
                                                      "low": 0.01, "high": 0.9, "p_value": 0.5}]),
                     "round": 1, "loop": "loop-a", "created_at": S.now()})
    return rows


def export_folder(root: Path, ids_by_split: dict[str, list[str]]) -> Path:
    """A dataset version folder as curation writes it: one Parquet shard per split with episode ids."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for split, ids in ids_by_split.items():
        (root / "sft").mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"episode_id": ids, "step_index": [0] * len(ids)}), root / "sft" / f"{split}-0.parquet")
    (root / "README.md").write_text("# sft-mix\n\nA card.\n")
    (root / "report.html").write_text(f"<!doctype html><h1>sft-mix report</h1><p>{root.name}</p>")
    return root


@pytest.fixture(scope="session")
def research() -> dict:
    """Everything the researcher-facing tests look at, built once."""
    rollout = rollout_episode()
    evals = eval_episodes()
    ids = {k: e.episode_id for k, e in evals.items()}
    return {"rollout": rollout, "eval_episodes": evals, "ids": ids, "rows": eval_rows(ids), "tree": tree_episode()}


def tree_episode() -> Episode:
    """A step whose action names its target element, on a screen with a UI tree."""
    from tests.factory import ui_tree

    target = Target(index=1, resource_id="com.example:id/ok", text="OK", bounds=(10, 20, 60, 50))
    steps = (Step(Observation(png(950), ui_tree=ui_tree("OK"), package="com.example"),
                  Action("tap", x=35, y=35, element=target), thought="the OK button confirms"),
             Step(Observation(png(951)), Action("terminate", status="success")))
    return Episode(instruction="Confirm the dialog with OK", source="agent", device=Device(W, H), steps=steps,
                   app="demo", task="DemoConfirm", outcome="success", verified_by="judge", policy="p2")


@pytest.fixture(scope="session")
def research_lake(tmp_path_factory, research) -> Lake:
    root = tmp_path_factory.mktemp("research")
    lake = build_lake(root / "lake")
    lake.write_episodes([research["rollout"], *research["eval_episodes"].values(), research["tree"]])
    lake.append("evals", research["rows"])
    all_ids = list(research["ids"].values())
    v1 = export_folder(root / "ds" / "v1", {"train": all_ids[:4], "val": all_ids[4:6]})
    v2 = export_folder(root / "ds" / "v2", {"train": all_ids[1:5], "val": all_ids[5:8]})
    rows = []
    for version, folder, ids in ((1, v1, {"train": all_ids[:4], "val": all_ids[4:6]}),
                                 (2, v2, {"train": all_ids[1:5], "val": all_ids[5:8]})):
        formats = {"sft": {s: {"rows": len(v), "files": [f"sft/{s}-0.parquet"]} for s, v in ids.items()}}
        row = dataset_row(version=version, folder=str(folder))
        row["exports_json"] = json.dumps({"path": str(folder), "formats": formats, "card": "README.md",
                                          "report": "report.html"})
        row["recipe"] = f"name: sft-mix\nmax_steps: {20 * version}\n"
        rows.append(row)
    lake.append("datasets", rows)
    return lake


@pytest.fixture(scope="session")
def rclient(research_lake) -> TestClient:
    return TestClient(create_app(Lake.open(research_lake.uri), settings()))
