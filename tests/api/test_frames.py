import hashlib

import pytest

from tests.api.conftest import gestures_episode

SHA = gestures_episode().steps[0].observation.sha256


def test_frame_is_served_with_etag_cache_and_cors_headers(client):
    r = client.get(f"/frames/{SHA}.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert hashlib.sha256(r.content).hexdigest() == SHA
    assert r.headers["etag"] == f'"{SHA}"'
    assert "immutable" in r.headers["cache-control"] and "max-age=31536000" in r.headers["cache-control"]
    assert r.headers["access-control-allow-origin"] == "*"


def test_frame_with_matching_if_none_match_is_304(client):
    r = client.get(f"/frames/{SHA}.png", headers={"If-None-Match": f'"{SHA}"'})
    assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == f'"{SHA}"'


def test_unknown_frame_is_404(client):
    r = client.get(f"/frames/{'0' * 64}.png")
    assert r.status_code == 404 and "0" * 64 in r.json()["detail"]


@pytest.mark.parametrize("path", [
    f"/frames/{SHA.upper()}.png",            # uppercase hex
    f"/frames/{SHA[:63]}.png",               # too short
    f"/frames/{SHA}0.png",                   # too long
    f"/frames/{SHA[:60]}zzzz.png",           # not hex
    "/frames/..%2F..%2Fetc%2Fpasswd.png",    # encoded slashes
    "/frames/%2e%2e%2f%2e%2e%2fetc%2fpasswd.png",
    "/frames/../../etc/passwd.png",
    "/frames/..%5c..%5cwindows.png",         # encoded backslashes
    f"/frames/{SHA}",                        # no extension
    f"/frames/{SHA}.png%00.txt",
])
def test_bad_frame_keys_are_client_errors(client, path):
    r = client.get(path)
    assert 400 <= r.status_code < 500
    assert r.headers.get("content-type") != "image/png" and b"root:" not in r.content


def test_frames_written_after_startup_are_served(fresh_client, fresh_lake):
    from datalake.lake import Lake
    from tests.factory import episode

    new = episode(seed=4242)
    sha = new.steps[0].observation.sha256
    assert fresh_client.get(f"/frames/{sha}.png").status_code == 404
    Lake.open(fresh_lake.uri).write_episodes([new])
    r = fresh_client.get(f"/frames/{sha}.png")
    assert r.status_code == 200 and r.content == new.steps[0].observation.screenshot


def test_unknown_frames_do_not_rebuild_the_index(client):
    browser = client.app.state.browser
    client.get(f"/frames/{SHA}.png")
    index = browser._frames_lake._frames
    for i in range(5):
        assert client.get(f"/frames/{i:064x}.png").status_code == 404
    assert browser._frames_lake._frames is index
