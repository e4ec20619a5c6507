"""The webhook's durable queue: acknowledged deliveries survive a killed API and are ingested once."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from annotate import inbox, journal
from api.app import create_app
from api.settings import ApiSettings
from datalake.lake import Lake
from tests.annotate.conftest import free_port
from tests.annotate.test_webhook import EPISODE, choice, keypoint, payload

ROOT = Path(__file__).resolve().parents[2]
SERVE = ("import sys, uvicorn; from api.app import create_app; from api.settings import ApiSettings; "
         "uvicorn.run(create_app(sys.argv[1], ApiSettings(webhook_secret='s3cret')), host='127.0.0.1', "
         "port=int(sys.argv[2]), log_level='warning')")


@pytest.fixture
def lake(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    lake.write_episodes([EPISODE])
    return lake


def count(lake, table, where="true"):
    return Lake.open(lake.uri).sql(f"SELECT count(*) AS n FROM {table} WHERE {where}").to_pylist()[0]["n"]


@pytest.mark.parametrize("store", ["journal", "delta"])
def test_an_api_killed_between_ack_and_ingest_loses_nothing(lake, store):
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PHONELOOP_WEBHOOK_INGEST_DELAY_S": "600",
           "PHONELOOP_LABEL_STUDIO_URL": "", "PHONELOOP_LABEL_STUDIO_TOKEN": "",
           "PHONELOOP_WEBHOOK_JOURNAL": "1" if store == "journal" else "0"}
    api = subprocess.Popen([sys.executable, "-c", SERVE, lake.uri, str(port)], env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert api.poll() is None and time.monotonic() < deadline, "the API did not start"
            time.sleep(0.2)
        body = payload([keypoint(50, 25), choice("step_correct", "no")])
        r = httpx.post(f"http://127.0.0.1:{port}/webhooks/label-studio", json=body,
                       headers={"X-Webhook-Secret": "s3cret"}, trust_env=False, timeout=30)
        assert r.status_code == 202
    finally:
        os.kill(api.pid, signal.SIGKILL)  # between the acknowledgement and the ingest
        api.wait(30)
    if store == "journal":  # acknowledged = one fsync'd line in the lake's journal, not yet a Delta commit
        assert journal.waiting(lake) == 1 and count(lake, "webhook_inbox") == 0
    else:
        assert count(lake, "webhook_inbox", "kind = 'received'") == 1 and journal.waiting(lake) == 0
    assert count(lake, "annotations") == 0

    restarted = TestClient(create_app(Lake.open(lake.uri), ApiSettings(webhook_secret="s3cret")))
    ingestor = restarted.app.state.ingestor
    assert ingestor.drained.wait(60), "the restarted API did not drain the inbox"
    (row,) = Lake.open(lake.uri).sql("SELECT action_json, step_correct, origin FROM annotations").to_pylist()
    assert json.loads(row["action_json"])["type"] == "tap" and row["step_correct"] is False
    assert inbox.pending(Lake.open(lake.uri)) == [] and journal.waiting(lake) == 0
    assert count(lake, "webhook_inbox", "kind = 'received'") == 1


def test_a_drain_that_dies_before_its_marks_doubles_nothing(lake, monkeypatch):
    first = json.dumps(payload([choice("step_correct", "yes")])).encode()
    inbox.receive(lake, first)
    inbox.receive(lake, first)  # redelivered
    inbox.receive(lake, json.dumps(payload([choice("step_correct", "no")], annotation_id=42)).encode())
    real = Lake.append

    def dies_at_the_marks(self, table, rows):
        if table == "webhook_inbox" and rows[0]["kind"] != "received":
            raise KeyboardInterrupt("killed")  # the journal's commit went through, the marks do not
        return real(self, table, rows)

    monkeypatch.setattr(Lake, "append", dies_at_the_marks)
    with pytest.raises(KeyboardInterrupt):
        inbox.drain(Lake.open(lake.uri))
    monkeypatch.setattr(Lake, "append", real)
    assert count(lake, "annotations") == 2 and len(inbox.pending(Lake.open(lake.uri))) == 2
    again = inbox.drain(Lake.open(lake.uri))
    assert (again.deliveries, again.written, again.already) == (2, 0, 2)
    assert count(lake, "annotations") == 2 and inbox.pending(Lake.open(lake.uri)) == []


def test_a_deleted_annotation_delivered_by_webhook_is_retracted(lake):
    inbox.receive(lake, json.dumps(payload([choice("step_correct", "no")], annotation_id=42)).encode())
    inbox.drain(Lake.open(lake.uri))
    assert count(lake, "annotations_current") == 1
    deleted = {"action": "ANNOTATIONS_DELETED", "project": {"id": 3}, "annotations": [{"id": 42}]}
    inbox.receive(lake, json.dumps(deleted).encode())
    assert inbox.drain(Lake.open(lake.uri)).retracted == 1
    assert count(lake, "annotations_current") == 0 and count(lake, "annotations", "status = 'retracted'") == 1


def test_a_drain_killed_after_committing_the_journal_doubles_nothing(lake, monkeypatch):
    inbox.receive(lake, json.dumps(payload([choice("step_correct", "no")], annotation_id=42)).encode())
    real = Path.unlink

    def dies(self, *args, **kwargs):
        raise KeyboardInterrupt("killed before the journal file was deleted")

    monkeypatch.setattr(Path, "unlink", dies)
    with pytest.raises(KeyboardInterrupt):
        inbox.drain(Lake.open(lake.uri))
    monkeypatch.setattr(Path, "unlink", real)
    assert count(lake, "webhook_inbox", "kind = 'received'") == 1 and journal.waiting(lake) == 1
    report = inbox.drain(Lake.open(lake.uri))  # reads the journal again: the delivery is already received
    assert (report.deliveries, report.written) == (1, 1)
    assert count(lake, "webhook_inbox", "kind = 'received'") == 1 and count(lake, "annotations") == 1
    assert journal.waiting(lake) == 0


def test_a_torn_last_journal_line_is_skipped_and_whole_lines_kept(lake):
    bodies = [json.dumps(payload([choice("step_correct", "no")], annotation_id=i)).encode() for i in (1, 2)]
    for body in bodies:
        inbox.receive(lake, body)
    current = journal.folder_of(lake) / journal.CURRENT
    whole = current.read_bytes()
    current.write_bytes(whole + whole.split(b"\n")[0][:40])  # a third line cut short by a crash (never acked)
    assert journal.waiting(lake) == 2
    assert inbox.drain(Lake.open(lake.uri)).written == 2
    assert count(lake, "annotations") == 2 and count(lake, "quarantine") == 0


def test_appends_racing_a_commit_lose_nothing_and_double_nothing(lake):
    import threading

    folder = journal.folder_of(lake)
    bodies = [json.dumps({"n": i}).encode() for i in range(120)]
    stop = threading.Event()

    def appender(part):
        for body in part:
            journal.append(folder, inbox.hashlib.sha256(body).hexdigest(), body, inbox.S.now())

    def committer():
        while not stop.is_set():
            journal.commit(Lake.open(lake.uri), "test")

    threads = [threading.Thread(target=appender, args=(bodies[i::4],)) for i in range(4)]
    commits = threading.Thread(target=committer)
    commits.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    commits.join()
    journal.commit(Lake.open(lake.uri), "test")
    got = Lake.open(lake.uri).sql("SELECT payload FROM webhook_inbox WHERE kind = 'received'").column(0).to_pylist()
    assert sorted(got) == sorted(bodies)  # every append once
    assert journal.waiting(lake) == 0
