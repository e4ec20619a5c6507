"""Signed, expiring frame URLs (api/signing.py) against the API with reads behind the token."""

import time

import pytest
from fastapi.testclient import TestClient

from annotate import push
from api.app import create_app
from api.settings import ApiSettings
from api.signing import FrameSigner
from tests.factory import episode

TOKEN = "signing-test-token"
EP = episode(seed=51, n_steps=2)


@pytest.fixture
def locked(lake):
    lake.write_episodes([EP])
    app = create_app(lake, ApiSettings(token=TOKEN, auth_reads=True, refresh_s=0.0))
    sha = lake.sql("SELECT frame_sha FROM steps ORDER BY step_index").column(0).to_pylist()
    return TestClient(app), sha


def test_a_signed_url_opens_one_frame_until_it_expires(locked):
    client, (sha, other) = locked
    signer = FrameSigner.from_api_token(TOKEN)
    assert client.get(f"/frames/{sha}.png").status_code == 401
    ok = client.get(f"/frames/{sha}.png?{signer.query(sha)}")
    assert ok.status_code == 200 and ok.content[:4] == b"\x89PNG"
    assert client.get(f"/frames/{other}.png?{signer.query(sha)}").status_code == 401  # another frame
    expired = signer.token(sha, expires=int(time.time()) - 5)
    assert client.get(f"/frames/{sha}.png?token={expired}").status_code == 401
    forged = signer.token(sha).split(".")[0] + "." + "0" * 32
    assert client.get(f"/frames/{sha}.png?token={forged}").status_code == 401
    stranger = FrameSigner.from_api_token("another-token").query(sha)
    assert client.get(f"/frames/{sha}.png?{stranger}").status_code == 401
    assert client.get(f"/frames/{sha}.png", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_signed_tokens_never_open_other_routes(locked):
    client, (sha, _) = locked
    query = FrameSigner.from_api_token(TOKEN).query(sha)
    assert client.get(f"/api/episodes?{query}").status_code == 401


@pytest.mark.parametrize("token", ["", "abc", "1.2.3", "x.y", "9" * 12 + ".zz"])
def test_malformed_tokens_are_refused(token):
    assert FrameSigner.from_api_token(TOKEN).valid("a" * 64, token) is False


def test_push_puts_the_public_url_and_the_token_in_tasks(lake, monkeypatch):
    lake.write_episodes([EP])
    monkeypatch.setenv("PHONELOOP_PUBLIC_URL", "https://frames.team.example")
    rows = push.select_steps(lake, where="true")
    from annotate.tasks import step_tasks

    signer = FrameSigner.from_api_token(TOKEN)
    (first, last) = step_tasks(rows, push.default_frames_url(), signer.query)
    assert first["data"]["image"].startswith(f"https://frames.team.example/frames/{rows[0]['frame_sha']}.png?token=")
    assert first["data"]["after_image"].split("?")[0].endswith(f"{rows[1]['frame_sha']}.png")
    assert last["data"]["after_caption"].startswith("after (last step")
    token = first["data"]["image"].split("token=")[1]
    assert signer.valid(rows[0]["frame_sha"], token)
