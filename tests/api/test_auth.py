import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.errors import InvalidSettings
from api.settings import ApiSettings
from datalake.lake import Lake
from tests.api.conftest import AUTH, TOKEN, gestures_episode, settings

READS = ["/api/episodes", f"/api/episodes/{gestures_episode().episode_id}", "/api/datasets", "/api/models",
         f"/frames/{gestures_episode().steps[0].observation.sha256}.png", "/episodes", "/datasets"]


@pytest.fixture(scope="module")
def locked(shared_lake):
    return TestClient(create_app(Lake.open(shared_lake.uri), settings(auth_reads=True)))


@pytest.mark.parametrize("path", READS)
def test_reads_are_open_by_default(client, path):
    assert client.get(path).status_code == 200


@pytest.mark.parametrize("path", READS)
def test_reads_need_the_token_when_configured(locked, path):
    assert locked.get(path).status_code == 401
    assert locked.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert locked.get(path, headers=AUTH).status_code == 200


def test_health_stays_open_when_reads_need_a_token(locked):
    assert locked.get("/health").status_code == 200


def test_settings_from_environment():
    s = ApiSettings.from_env({"PHONELOOP_API_TOKEN": TOKEN, "PHONELOOP_API_AUTH_READS": "1",
                              "PHONELOOP_WEBHOOK_SECRET": "w", "PHONELOOP_SQL_ROW_LIMIT": "10",
                              "PHONELOOP_SQL_TIMEOUT_S": "0.5"})
    assert (s.token, s.auth_reads, s.webhook_secret, s.sql_row_limit, s.sql_timeout_s) == (TOKEN, True, "w", 10, 0.5)
    assert ApiSettings.from_env({}).token is None


@pytest.mark.parametrize("env", [{"PHONELOOP_API_AUTH_READS": "1"}, {"PHONELOOP_SQL_ROW_LIMIT": "many"},
                                 {"PHONELOOP_SQL_TIMEOUT_S": "0"}])
def test_bad_settings_are_refused(env):
    with pytest.raises(InvalidSettings):
        ApiSettings.from_env(env)
