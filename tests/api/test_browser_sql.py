"""The SQL page, search over what the model said, and list exports in headless Chromium."""

import csv
import io

import pytest

from api.app import create_app
from datalake.lake import Lake
from tests.api.conftest import TOKEN, serving, settings
from tests.api.test_browser_debug import context, keep, page  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def server(research_lake):
    with serving(create_app(Lake.open(research_lake.uri), settings())) as url:
        yield url


def test_sql_page_logs_in_runs_a_query_downloads_csv_and_logs_out(page, server):  # noqa: F811
    page.goto(f"{server}/sql")
    assert page.locator("form#login").is_visible()  # the SQL page always needs the login
    page.fill("input[name=token]", TOKEN)
    page.click("form#login button")
    page.wait_for_selector("#sql-form")
    page.fill("#sql-query", "SELECT episode_id, raw_output FROM steps WHERE raw_output LIKE '%should tap%'")
    page.click("#sql-form button[type=submit]")
    page.wait_for_selector("#sql-result")
    assert page.locator("#sql-result tbody tr").count() == 1
    assert "I should tap the add button" in page.locator("#sql-result").inner_text()
    keep(page, "sql-page")
    download = page.request.get(page.locator("#sql-csv").evaluate("a => a.href"))  # the session cookie rides along
    rows = list(csv.reader(io.StringIO(download.text())))
    assert download.status == 200 and rows[0] == ["episode_id", "raw_output"] and len(rows) == 2
    page.click("#logout button")
    page.wait_for_selector("form#login")
    page.goto(f"{server}/sql")
    assert page.locator("form#login").is_visible()


def test_search_for_what_the_model_said_then_export_the_list(page, server, research):  # noqa: F811
    page.goto(f"{server}/episodes")
    page.fill("input[name=q]", "should tap")  # words of the model's raw output, in no instruction
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=should+tap**", wait_until="domcontentloaded")
    rows = page.locator("#episodes tbody tr")
    assert rows.count() == 1 and research["rollout"].instruction in rows.inner_text()
    keep(page, "search-model-output")
    exported = page.request.get(page.locator("#export-csv").evaluate("a => a.href"))
    listed = list(csv.DictReader(io.StringIO(exported.text())))
    assert [r["episode_id"] for r in listed] == [research["rollout"].episode_id]
