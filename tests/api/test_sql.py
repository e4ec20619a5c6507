import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.sql import parse_one_select
from api.errors import SqlRejected
from datalake.lake import Lake
from tests.api.conftest import AUTH, settings


def sql(client, query, headers=AUTH):
    return client.post("/api/sql", json={"query": query}, headers=headers)


def test_select_over_the_lake_views(client):
    r = sql(client, "SELECT source, count(*) AS n FROM episodes GROUP BY source ORDER BY source")
    assert r.status_code == 200
    body = r.json()
    assert body["columns"] == ["source", "n"] and body["types"] == ["VARCHAR", "BIGINT"]
    assert ["oracle", 2] in body["rows"] and body["truncated"] is False


def test_views_of_every_table_answer(client):
    for view in ("episodes", "steps", "frames", "annotations", "datasets", "models", "quarantine",
                 "steps_resolved", "episodes_raw", "steps_raw"):
        assert sql(client, f"SELECT count(*) FROM {view}").status_code == 200, view


def test_bytes_come_back_as_base64(client):
    r = sql(client, "SELECT png FROM frames LIMIT 1")
    assert r.status_code == 200 and r.json()["rows"][0][0].startswith("iVBORw0KGgo")


def test_rows_are_capped_at_the_row_limit(shared_lake):
    client = TestClient(create_app(Lake.open(shared_lake.uri), settings(sql_row_limit=5)))
    body = sql(client, "SELECT * FROM range(100)").json()
    assert len(body["rows"]) == 5 and body["truncated"] is True and body["row_limit"] == 5


def test_a_slow_query_is_interrupted(shared_lake):
    client = TestClient(create_app(Lake.open(shared_lake.uri), settings(sql_timeout_s=0.3)))
    r = sql(client, "SELECT count(*) FROM range(1000000000) a, range(1000) b WHERE a.range % 7 = b.range")
    assert r.status_code == 408 and "interrupted" in r.json()["detail"]


FORBIDDEN = [
    "COPY (SELECT * FROM episodes) TO '/tmp/phoneloop-leak.csv'",
    "COPY episodes FROM '/etc/passwd'",
    "ATTACH '/tmp/phoneloop-other.db' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_parquet('/work/**/*.parquet')",
    "PRAGMA database_list",
    "PRAGMA enable_external_access",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "SELECT 1; SELECT 2",
    "SELECT 1; COPY episodes TO '/tmp/x.csv'",
    "CREATE TABLE t AS SELECT 1",
    "INSERT INTO annotations SELECT * FROM annotations",
    "DELETE FROM episodes",
    "UPDATE episodes SET outcome = 'success'",
    "DROP VIEW episodes",
    "EXPORT DATABASE '/tmp/phoneloop-export'",
    "CALL pragma_version()",
    "EXPLAIN SELECT 1",
    "SELECT * FROM query('COPY episodes TO ''/tmp/x.csv''')",
    "",
    "   ;  ",
]


@pytest.mark.parametrize("query", FORBIDDEN)
def test_statements_that_must_fail(client, query):
    r = sql(client, query)
    assert r.status_code in (400, 422), (query, r.status_code, r.text)


def test_nothing_was_written_by_forbidden_statements(client):
    import os

    for query in FORBIDDEN:
        if query.split(" ")[0] in ("COPY", "ATTACH", "EXPORT", "SELECT"):
            sql(client, query)
    assert not os.path.exists("/tmp/phoneloop-leak.csv") and not os.path.exists("/tmp/phoneloop-other.db")
    assert sql(client, "SELECT count(*) FROM episodes").json()["rows"] == [[7]]


def test_parse_one_select_keeps_only_a_select():
    assert parse_one_select("SELECT 1;") == "SELECT 1"
    with pytest.raises(SqlRejected):
        parse_one_select("PRAGMA version")


def test_bad_sql_is_a_400_with_the_reason(client):
    r = sql(client, "SELECT * FROM no_such_table")
    assert r.status_code == 400 and "no_such_table" in r.json()["detail"]


def test_sql_without_a_token_is_401(client):
    assert sql(client, "SELECT 1", headers={}).status_code == 401
    assert sql(client, "SELECT 1", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert sql(client, "SELECT 1", headers={"Authorization": "Basic dGVzdA=="}).status_code == 401


def test_sql_refuses_to_run_when_no_token_is_configured(shared_lake):
    client = TestClient(create_app(Lake.open(shared_lake.uri), settings(token=None)))
    r = sql(client, "SELECT 1", headers={"Authorization": "Bearer anything"})
    assert r.status_code == 503 and "PHONELOOP_API_TOKEN" in r.json()["detail"]


def test_sql_body_rejects_unknown_fields(client):
    r = client.post("/api/sql", json={"query": "SELECT 1", "limit": 10}, headers=AUTH)
    assert r.status_code == 422
