"""The SQL page (behind the session login) and CSV/JSON exports of filtered lists."""

import csv
import io

from functools import partial

import httpx
import pytest

from api import viewer_sql
from api.app import create_app
from api.auth import COOKIE
from datalake.lake import Lake
from tests.api.conftest import AUTH, TOKEN, serving, settings


get, post = partial(httpx.get, timeout=120), partial(httpx.post, timeout=120)  # a loaded 2-core machine is slow


@pytest.fixture(scope="module")
def server(shared_lake):
    with serving(create_app(Lake.open(shared_lake.uri), settings(sql_row_limit=3))) as base:
        yield base


def login(base: str) -> dict:
    r = post(f"{base}/login", data={"token": TOKEN, "next": "/sql"}, follow_redirects=False)
    assert r.status_code == 303
    return {COOKIE: r.cookies[COOKIE]}


def test_the_sql_page_needs_a_login_even_when_reads_are_open(server):
    r = get(f"{server}/sql", params={"query": "SELECT 1"})
    assert r.status_code == 401 and 'name="token"' in r.text  # the login form, not a result
    assert get(f"{server}/sql.csv", params={"query": "SELECT 1"}).status_code == 401


def test_the_sql_page_runs_a_query_with_the_session_and_stops_after_logout(server):
    cookies = login(server)
    r = get(f"{server}/sql", params={"query": "SELECT source, count(*) AS n FROM episodes GROUP BY source "
                                                     "ORDER BY source"}, cookies=cookies)
    assert r.status_code == 200 and 'id="sql-result"' in r.text and "<td>oracle</td>" in r.text
    assert 'id="sql-csv"' in r.text and "episodes_resolved" in r.text  # the views are listed
    post(f"{server}/logout", cookies=cookies)
    assert get(f"{server}/sql", params={"query": "SELECT 1"}, cookies=cookies).status_code == 401


def test_the_sql_page_says_which_limit_cut_the_result_and_shows_errors(server):
    cookies = login(server)
    r = get(f"{server}/sql", params={"query": "SELECT * FROM range(10)"}, cookies=cookies)
    assert r.status_code == 200 and "cut at the row limit" in r.text and r.text.count("<tr><td>") == 3
    r = get(f"{server}/sql", params={"query": "DELETE FROM episodes"}, cookies=cookies)
    assert r.status_code == 400 and 'id="sql-error"' in r.text and "only SELECT" in r.text


def test_a_query_result_downloads_as_csv_and_json(server):
    cookies = login(server)
    query = "SELECT range AS i, 'x,y' AS s FROM range(2)"
    r = get(f"{server}/sql.csv", params={"query": query}, cookies=cookies)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert list(csv.reader(io.StringIO(r.text))) == [["i", "s"], ["0", "x,y"], ["1", "x,y"]]
    r = get(f"{server}/sql.json", params={"query": query}, headers=AUTH)  # the bearer token works too
    assert r.status_code == 200 and r.json()["rows"] == [[0, "x,y"], [1, "x,y"]]


def test_a_filtered_episode_list_exports_as_csv_and_json(server):
    rows = list(csv.DictReader(io.StringIO(get(f"{server}/episodes.csv", params={"source": "oracle"}).text)))
    assert len(rows) == 2 and {r["source"] for r in rows} == {"oracle"} and "instruction" in rows[0]
    body = get(f"{server}/episodes.json", params={"q": "wi-fi", "source": "oracle"}).json()
    assert body["filters"] == {"q": "wi-fi", "source": "oracle"} and body["truncated"] is False
    assert [e["instruction"] for e in body["episodes"]] == ["Turn on Wi-Fi"]
    page = get(f"{server}/episodes", params={"source": "oracle"}).text
    assert 'href="/episodes.csv?source=oracle"' in page and 'href="/episodes.json?source=oracle"' in page
    assert get(f"{server}/episodes.csv", params={"sauce": "oracle"}).status_code == 422


def test_an_export_over_the_row_cap_says_it_was_cut(server, monkeypatch):
    monkeypatch.setattr(viewer_sql, "EXPORT_ROWS", 3)
    r = get(f"{server}/episodes.csv")
    assert r.headers["x-phoneloop-truncated"] == "rows" and len(r.text.strip().splitlines()) == 1 + 3
    assert get(f"{server}/episodes.json").json()["truncated"] is True
