"""Logging in with the token when reads need auth: a session cookie for browsers, bearer for the API."""

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.auth import COOKIE
from datalake.lake import Lake
from tests.api.conftest import AUTH, TOKEN, gestures_episode, settings

FRAME = f"/frames/{gestures_episode().steps[0].observation.sha256}.png"


@pytest.fixture
def locked(shared_lake):
    return TestClient(create_app(Lake.open(shared_lake.uri), settings(auth_reads=True)))


def test_pages_without_a_session_offer_the_token_form(locked):
    r = locked.get("/episodes", params={"source": "oracle"})
    assert r.status_code == 401 and r.headers["content-type"].startswith("text/html")
    assert '<form method="post" action="/login"' in r.text and 'name="token"' in r.text
    assert 'value="/episodes?source=oracle"' in r.text
    assert locked.get("/api/episodes").headers["content-type"] == "application/json"  # the API stays JSON


def test_login_sets_an_httponly_samesite_cookie_that_opens_pages_and_frames(locked):
    r = locked.post("/login", data={"token": TOKEN, "next": "/datasets"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/datasets"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert TOKEN not in cookie  # the cookie holds an HMAC of the token, not the token
    for path in ("/episodes", "/datasets", FRAME, "/api/episodes"):
        assert locked.get(path).status_code == 200
    locked.post("/logout")
    assert locked.get("/episodes").status_code == 401


def test_a_wrong_token_or_forged_cookie_does_not_log_in(locked):
    r = locked.post("/login", data={"token": "nope", "next": "/episodes"}, follow_redirects=False)
    assert r.status_code == 401 and "set-cookie" not in r.headers and "wrong token" in r.text
    locked.cookies.set(COOKIE, TOKEN)
    assert locked.get("/episodes").status_code == 401
    assert locked.get(FRAME).status_code == 401


def test_bearer_tokens_still_work(locked):
    assert locked.get("/api/episodes", headers=AUTH).status_code == 200
    assert locked.get(FRAME, headers=AUTH).status_code == 200


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example/", "/\\evil.example", "episodes"])
def test_login_only_returns_to_local_paths(locked, target):
    r = locked.post("/login", data={"token": TOKEN, "next": target}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/episodes"


def test_login_form_is_reachable_without_a_token(locked):
    r = locked.get("/login")
    assert r.status_code == 200 and 'name="token"' in r.text
