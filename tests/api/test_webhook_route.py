import time

import pytest
from fastapi.testclient import TestClient

from annotate import inbox, journal
from api.app import create_app
from datalake.lake import Lake
from tests.annotate.test_webhook import choice, keypoint
from tests.api.conftest import AUTH, SECRET, gestures_episode, settings
from tests.factory import H, W

EID = gestures_episode().episode_id


def body(results, step_index=0):
    return {"action": "ANNOTATION_CREATED", "project": {"id": 1},
            "task": {"id": 5, "data": {"episode_id": EID, "step_index": step_index}},
            "annotation": {"id": 9, "completed_by": 2, "result": results}}


def annotations(lake):
    return Lake.open(lake.uri).sql("SELECT * FROM annotations").to_pylist()


def ingested(client, timeout=30.0):
    """Wait for the app's background ingest to drain what was acknowledged."""
    ingestor = client.app.state.ingestor
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ingestor.drained.clear()
        lake = Lake.open(ingestor.lake_uri)
        if not inbox.pending(lake) and not journal.waiting(lake):  # nothing received or journaled is left
            return
        ingestor.drained.wait(0.5)
    raise AssertionError("the webhook inbox did not drain")


def test_webhook_writes_one_annotation_visible_in_the_episode(fresh_client, fresh_lake):
    payload = body([keypoint(50, 50), choice("step_correct", "no")], step_index=2)
    r = fresh_client.post("/webhooks/label-studio", json=payload, headers={"X-Webhook-Secret": SECRET})
    assert r.status_code == 202 and r.json()["status"] == "queued" and len(r.json()["delivery_id"]) == 64
    ingested(fresh_client)
    assert len(annotations(fresh_lake)) == 1
    step = fresh_client.get(f"/api/episodes/{EID}").json()["steps"][2]
    assert step["correction"] == {"type": "tap", "x": W * 0.5, "y": H * 0.5} and step["step_correct"] is False


@pytest.mark.parametrize("headers", [{}, {"X-Webhook-Secret": "wrong"}, {"X-Webhook-Secret": ""}, AUTH,
                                     {"X-Webhook-Secret": SECRET + "x"}])
def test_webhook_with_a_wrong_or_missing_secret_is_401_and_writes_nothing(fresh_client, fresh_lake, headers):
    r = fresh_client.post("/webhooks/label-studio", json=body([choice("step_correct", "yes")]), headers=headers)
    assert r.status_code == 401
    assert annotations(fresh_lake) == []


def test_webhook_without_a_configured_secret_is_503(fresh_lake):
    client = TestClient(create_app(Lake.open(fresh_lake.uri), settings(webhook_secret=None)))
    r = client.post("/webhooks/label-studio", json=body([choice("step_correct", "yes")]),
                    headers={"X-Webhook-Secret": "anything"})
    assert r.status_code == 503 and annotations(fresh_lake) == []


@pytest.mark.parametrize("payload", [{"action": "TASK_CREATED"}, body([choice("step_correct", "perhaps")]), [1, 2],
                                     body([choice("review", "maybe")])])
def test_malformed_webhook_is_422_and_writes_nothing(fresh_client, fresh_lake, payload):
    r = fresh_client.post("/webhooks/label-studio", json=payload, headers={"X-Webhook-Secret": SECRET})
    assert r.status_code == 422 and annotations(fresh_lake) == []
    assert Lake.open(fresh_lake.uri).sql("SELECT count(*) AS n FROM webhook_inbox").to_pylist() == [{"n": 0}]


def test_a_delivery_the_lake_cannot_place_is_acknowledged_then_quarantined(fresh_client, fresh_lake):
    r = fresh_client.post("/webhooks/label-studio", json=body([choice("step_correct", "yes")], step_index=40),
                          headers={"X-Webhook-Secret": SECRET})
    assert r.status_code == 202
    ingested(fresh_client)
    lake = Lake.open(fresh_lake.uri)
    assert annotations(fresh_lake) == []
    (bad,) = lake.sql("SELECT reason, origin FROM quarantine").to_pylist()
    assert "has no step 40" in bad["reason"] and bad["origin"] == "label-studio:webhook"
    assert lake.sql("SELECT kind FROM webhook_inbox ORDER BY created_at").column(0).to_pylist() == ["received",
                                                                                                  "failed"]


def test_webhook_answers_well_within_label_studios_timeout(fresh_client):
    fresh_client.get("/api/episodes")  # warm the lake's connection, as a running server would be
    start = time.perf_counter()
    r = fresh_client.post("/webhooks/label-studio", json=body([choice("step_correct", "yes")]),
                          headers={"X-Webhook-Secret": SECRET})
    assert r.status_code == 202 and time.perf_counter() - start < 1.0
