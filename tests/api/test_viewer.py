import re

from tests.api.conftest import gestures_episode


def test_home_redirects_to_the_episode_list(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/episodes"


def test_episode_list_page_links_each_episode_and_offers_filters(client):
    html = client.get("/episodes").text
    assert html.count('href="/episodes/') == 7
    for name in ("source", "app", "category", "outcome", "round", "policy"):
        assert f'<select name="{name}">' in html


def test_episode_list_page_applies_filters(client):
    html = client.get("/episodes", params={"source": "oracle", "round": ""}).text
    assert html.count('href="/episodes/') == 2 and "Turn on Wi-Fi" in html


def test_episode_list_page_rejects_a_bad_round_naming_it(client):
    r = client.get("/episodes", params={"round": "two"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html") and "round" in r.text


def test_episode_page_draws_each_action_kind(client):
    html = client.get(f"/episodes/{gestures_episode().episode_id}").text
    steps = re.split(r'<section class="step"', html)[1:]
    assert len(steps) == 6
    tap, long_press, swipe, typed, key, end = steps
    assert '<rect class="box" x="10" y="20" width="50" height="30"/>' in tap
    assert 'class="recorded dot"' in tap and 'class="corrected dot" cx="80" cy="150"' in tap
    assert 'class="recorded ring"' in long_press
    assert 'class="recorded arrow" x1="50" y1="200" x2="50" y2="60"' in swipe
    assert "hello" in typed and "key: back" in key and "terminate: success" in end
    assert 'class="correction"' in tap and 'class="correction"' not in long_press
    assert "incorrect" in tap


def test_episode_page_shows_outcome_and_verifier(client):
    html = client.get(f"/episodes/{gestures_episode().episode_id}").text
    assert 'class="outcome-failure">failure</span>, verified by <strong id="verified-by">judge</strong>' in html
    assert '<script src="/static/viewer.js"></script>' in html
    assert client.get("/static/viewer.js").status_code == 200


def test_missing_episode_page_is_an_html_404(client):
    r = client.get("/episodes/nope")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html") and "nope" in r.text


def test_datasets_page_lists_datasets_and_models(client):
    html = client.get("/datasets").text
    assert 'href="/datasets/sft-mix/v1"' in html and "tiny-sft" in html


def test_dataset_page_shows_counts_and_links_its_report(client):
    html = client.get("/datasets/sft-mix/v1").text
    assert "<th>steps</th><td>20</td>" in html
    tables = html.replace("\n", "")
    assert "<th>op</th>" in tables and "<td>filter</td>" in tables  # a list of records becomes a table
    assert "<th>train</th><td>5</td>" in tables and "<th>human</th><td>2</td>" in tables
    assert 'id="report" href="/datasets/sft-mix/v1/report"' in html
    report = client.get("/datasets/sft-mix/v1/report")
    assert report.status_code == 200 and "kept 6 of 6 episodes" in report.text
    assert report.headers["content-type"].startswith("text/html")
    assert "script-src 'none'" in report.headers["content-security-policy"]


def test_dataset_version_without_a_report_has_no_link(client):
    html = client.get("/datasets/sft-mix/v2").text
    assert "<th>episodes</th><td>6</td>" in html and 'id="report"' not in html
    assert client.get("/datasets/sft-mix/v2/report").status_code == 404


def test_unknown_dataset_version_is_404(client):
    assert client.get("/datasets/sft-mix/v9").status_code == 404
    assert client.get("/datasets/sft-mix/v9/report").status_code == 404
