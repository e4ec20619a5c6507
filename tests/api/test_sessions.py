"""Viewer sessions against the real server over HTTP: a cookie expires, and logout revokes it
on the server (a copy of the cookie kept from before the logout is refused)."""

import time

import httpx
import pytest

from api.app import create_app
from api.auth import COOKIE
from api.sessions import SessionStore
from datalake.lake import Lake
from tests.api.conftest import TOKEN, serving, settings


def login(base: str) -> str:
    r = httpx.post(f"{base}/login", data={"token": TOKEN, "next": "/episodes"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.cookies[COOKIE]


def page(base: str, cookie: str) -> int:
    return httpx.get(f"{base}/episodes", cookies={COOKIE: cookie}, follow_redirects=False).status_code


@pytest.fixture
def server(shared_lake):
    with serving(create_app(Lake.open(shared_lake.uri), settings(auth_reads=True, session_ttl_s=2))) as base:
        yield base


def test_a_logged_out_cookie_is_refused_by_the_server(server):
    cookie = login(server)
    assert page(server, cookie) == 200
    r = httpx.post(f"{server}/logout", cookies={COOKIE: cookie}, follow_redirects=False)
    assert r.status_code == 303
    assert page(server, cookie) == 401  # the same cookie, replayed after logout
    assert httpx.get(f"{server}/api/episodes", cookies={COOKIE: cookie}).status_code == 401


def test_an_expired_cookie_is_refused_by_the_server(server):
    r = httpx.post(f"{server}/login", data={"token": TOKEN, "next": "/episodes"}, follow_redirects=False)
    assert "Max-Age=2" in r.headers["set-cookie"]
    cookie = r.cookies[COOKIE]
    assert page(server, cookie) == 200
    time.sleep(2.2)
    assert page(server, cookie) == 401


def test_every_login_is_its_own_session(server):
    first, second = login(server), login(server)
    assert first != second
    httpx.post(f"{server}/logout", cookies={COOKIE: first})
    assert page(server, first) == 401 and page(server, second) == 200


def test_a_cookie_with_a_later_expiry_written_in_is_refused():
    store = SessionStore(b"k" * 32, ttl_s=60)
    sid, expires, mac = store.open(now=1000).split(".")
    assert store.valid(f"{sid}.{expires}.{mac}", now=1001)
    assert not store.valid(f"{sid}.{int(expires) + 3600}.{mac}", now=1001)  # the signature covers the expiry
    assert not store.valid(f"{sid}.{expires}.{mac}", now=int(expires))
    assert not SessionStore(b"other" * 8, ttl_s=60).valid(f"{sid}.{expires}.{mac}", now=1001)
