"""The side-by-side review in Chromium, on the real Label Studio: a reviewer logs in with the
password ``annotate users add`` printed, sees each annotator's answer by e-mail, and submits the
pre-filled form without a verdict; the pull counts it as an accept of the annotators' majority."""

import uuid

import pytest

from annotate import people, pull, push
from tests.annotate.test_labelstudio import choice, keypoint
from tests.annotate.test_review_project import _answered
from tests.annotate.test_team import lake, resolved  # noqa: F401  (lake: the fixture)
from tests.browser import chromium


@pytest.fixture
def page():
    with chromium(1920, 1080) as context:
        yield context.new_page()


def test_a_reviewer_in_the_browser_sees_both_answers_and_an_untouched_submit_accepts(lake, client, project, page):
    moved = [keypoint(90, 200), choice("action_type", "tap")]
    ann1, ann2 = _answered(lake, client, project, [moved, moved])
    report = push.push(lake, client, project + "-review", preset="failed", kind="review")
    (task,) = client.tasks(report.project_id)
    reviewer = people.add_user(client, lake.uri, f"rev-{uuid.uuid4().hex[:8]}@example.com", "reviewer")

    page.set_default_timeout(120_000)
    page.goto(f"{client.url}/user/login/")
    page.fill("input[name=email]", reviewer["email"])
    page.fill("input[name=password]", reviewer["password"])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/user/login" not in url)
    page.goto(f"{client.url}/projects/{report.project_id}/data?task={task['id']}")
    page.get_by_text(ann1.email).first.wait_for()  # the answers table, each annotator by e-mail
    assert page.get_by_text(ann2.email).count() >= 1
    assert page.get_by_text("(majority)", exact=False).count() >= 1
    page.get_by_role("button", name="Submit").first.click()  # the form as it was pre-filled: no verdict
    page.wait_for_function(f"""async () => {{
        const r = await fetch('/api/tasks/{task["id"]}/annotations/');
        return r.ok && (await r.json()).length === 1;
    }}""")
    got = pull.pull(lake, client, project + "-review")
    assert (got.written, got.quarantined) == (1, 0), got
    (row,) = lake.sql("SELECT review_verdict, annotator FROM annotations WHERE is_review").to_pylist()
    assert row == {"review_verdict": "accept", "annotator": reviewer["email"]}
    after = resolved(lake, 0)
    assert after["resolved_by"] == "majority" and abs(after["x"] - 90) <= 1 and abs(after["y"] - 200) <= 1
