"""The researcher's viewer in headless Chromium: invalid steps, keys, search, evaluations, login, docs offline.

Each test keeps a 1920x1080 screenshot of its page under ``artifacts/screenshots/`` (gitignored;
the path is printed) for people to look at.
"""

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from api.app import create_app
from datalake.lake import Lake
from tests.api.conftest import EVAL_ID, OUTPUTS, TOKEN, serving, settings
from tests.browser import chromium

SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@pytest.fixture(scope="module")
def context():
    with chromium(1920, 1080) as ctx:
        yield ctx


@pytest.fixture
def page(context):
    page = context.new_page()
    yield page
    page.close()


@pytest.fixture(scope="module")
def server(research_lake):
    with serving(create_app(Lake.open(research_lake.uri), settings())) as url:
        yield url


@pytest.fixture(scope="module")
def locked_server(research_lake):
    with serving(create_app(Lake.open(research_lake.uri), settings(auth_reads=True))) as url:
        yield url


def keep(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def episode_url(episode_id: str, query: str = "") -> re.Pattern:
    """An episode page's URL, with or without the ``#step=N`` that viewer.js writes once it has run (a glob
    without it matched only when the check beat the script, so the test failed on a loaded machine)."""
    return re.compile(re.escape(f"/episodes/{episode_id}" + (f"?{query}" if query else "")) + r"(#.*)?$")


def images_loaded(page) -> None:
    page.wait_for_function("Array.from(document.querySelectorAll('section.step.current img, #filmstrip img'))"
                           ".every(i => i.complete && i.naturalWidth > 0)")


def test_invalid_step_shows_the_raw_output_and_the_error(page, server, research):
    page.goto(f"{server}/episodes/{research['rollout'].episode_id}#step=1")
    step = page.locator("section.step.current")
    assert step.get_attribute("id") == "step-1"
    images_loaded(page)
    assert step.locator(".raw-output").inner_text() == OUTPUTS[1]
    error = step.locator(".parse-error")
    assert error.is_visible() and "cannot parse action from model output" in error.inner_text()
    assert step.locator(".tag.invalid").first.is_visible()
    assert page.locator("section.step:not(.current)").first.is_hidden()
    big = step.locator(".shot.big img").first.bounding_box()
    caption = step.locator(".frames figcaption").first.bounding_box()
    # the screenshot fills the window's height below the header, not a thumbnail, and all of it is in view
    assert big["height"] > 0.6 * 1080 and big["y"] + big["height"] <= caption["y"] <= 1080 - caption["height"]
    assert page.locator("#stop").inner_text() == "max_steps"
    keep(page, "episode-invalid-step")
    page.keyboard.press("j")
    assert page.locator("section.step.current .parse-error").inner_text() == "tap outside the 1080x2400 screen"


def test_j_k_move_steps_and_brackets_move_episodes(page, server):
    query = "q=alarm&sort=instruction"
    listing = json.loads(page.request.get(f"{server}/api/episodes?{query}&limit=500").text())["items"]
    ids = [e["episode_id"] for e in listing]
    page.goto(f"{server}/episodes/{ids[1]}?{query}")
    page.wait_for_selector("section.step.current#step-0")
    page.keyboard.press("j")
    assert page.locator("section.step.current").get_attribute("id") == "step-1"
    assert page.locator("#filmstrip .thumb.current").get_attribute("data-step") == "1"
    page.keyboard.press("k")
    page.keyboard.press("k")  # stays on the first step
    assert page.locator("section.step.current").get_attribute("id") == "step-0"
    images_loaded(page)
    keep(page, "episode-keys")
    page.keyboard.press("]")
    page.wait_for_url(episode_url(ids[2], query), wait_until="domcontentloaded")
    page.wait_for_selector("section.step.current")  # viewer.js has run: keys work
    page.keyboard.press("[")
    page.wait_for_url(episode_url(ids[1], query), wait_until="domcontentloaded")
    page.wait_for_selector("section.step.current")  # viewer.js has run: keys work
    page.keyboard.press("[")
    page.wait_for_url(episode_url(ids[0], query), wait_until="domcontentloaded")
    assert page.locator("#prev-episode").count() == 0


def test_ui_tree_opens_with_the_target_node_highlighted(page, server, research):
    page.goto(f"{server}/episodes/{research['tree'].episode_id}")
    page.locator("section.step.current details.tree summary").first.click()
    target = page.locator("section.step.current details.tree .node.target > summary")
    target.wait_for()
    assert "“OK”" in target.inner_text() and "[10,20,60,50]" in target.inner_text()
    assert target.evaluate("s => getComputedStyle(s).backgroundColor") == "rgb(253, 230, 138)"
    images_loaded(page)
    keep(page, "episode-ui-tree")


def test_search_finds_an_episode_by_a_word_of_its_instruction(page, server, research):
    page.goto(f"{server}/episodes")
    page.fill("input[name=q]", "dialog")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=dialog**", wait_until="domcontentloaded")
    rows = page.locator("#episodes tbody tr")
    assert rows.count() == 1 and "Confirm the dialog with OK" in rows.inner_text()
    keep(page, "episode-search")
    page.click("text=Confirm the dialog with OK")
    page.wait_for_selector("section.step.current")
    assert page.url.split("#")[0].endswith(f"/episodes/{research['tree'].episode_id}?q=dialog")


def test_eval_page_table_equals_the_evals_table(page, server, research_lake):
    page.goto(f"{server}/evals/{EVAL_ID}")
    stored = {r["policy"]: json.loads(r["summary_json"])
              for r in research_lake.sql("SELECT policy, summary_json FROM evals").to_pylist()}
    headers = page.locator("#eval-table thead th").all_inner_texts()[2:]
    assert sorted(headers) == sorted(stored)
    rows = page.locator("#eval-table tbody tr")
    checked = 0
    for i in range(rows.count()):
        row = rows.nth(i)
        by, group = row.get_attribute("data-by"), row.get_attribute("data-group")
        for policy, cell in zip(headers, row.locator("td.num").all()):
            summary = stored[policy]
            want = summary["overall"] if by == "all" else summary[f"by_{by}"][group]
            text = cell.inner_text()
            assert text.startswith(f"{want['successes']} / {want['n']} · {100 * want['rate']:.1f}%")
            assert f"[{100 * want['low']:.1f}%, {100 * want['high']:.1f}%]" in text
            checked += 1
    assert checked == 8
    assert page.locator("#chart rect").count() == 8
    keep(page, "eval")
    page.click("#compare-form button")
    page.wait_for_url("**/evals/compare?**", wait_until="domcontentloaded")
    page.locator("#compare-pairs a").first.click()
    page.wait_for_selector("#side-by-side iframe")
    assert page.locator("#side-by-side iframe").count() == 2
    page.locator("#side-by-side").scroll_into_view_if_needed()
    embedded = [h.content_frame() for h in page.locator("#side-by-side iframe").element_handles()]
    assert len(embedded) == 2
    for frame in embedded:
        frame.wait_for_selector("section.step.current")
        images_loaded(frame)
    keep(page, "eval-compare")


def test_login_with_the_token_opens_pages_and_frames(page, locked_server, research):
    episode = research["rollout"]
    frame = f"{locked_server}/frames/{episode.steps[0].observation.sha256}.png"
    assert page.request.get(frame).status == 401
    page.goto(f"{locked_server}/episodes/{episode.episode_id}")
    assert page.locator("form#login").is_visible()
    keep(page, "login-form")
    page.fill("input[name=token]", TOKEN)
    page.click("form#login button")
    page.wait_for_url(episode_url(episode.episode_id), wait_until="domcontentloaded")
    page.wait_for_selector("section.step.current")
    images_loaded(page)
    keep(page, "login-episode")
    assert page.request.get(frame).status == 200
    shown = page.goto(frame)
    assert shown.status == 200 and shown.headers["content-type"] == "image/png"
    cookie = next(c for c in page.context.cookies() if c["name"] == "phoneloop_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["value"] != TOKEN
    page.context.clear_cookies()


def test_docs_work_with_the_network_off(page, server):
    blocked = []
    here = urlsplit(server).netloc

    def only_here(route):
        if urlsplit(route.request.url).netloc == here:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_here)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=20_000)
    paths = page.locator(".swagger-ui .opblock-summary-path").all_inner_texts()
    assert "/api/episodes" in [p.strip() for p in paths] and "/api/evals/{eval_id}" in [p.strip() for p in paths]
    keep(page, "docs-offline")
    page.goto(f"{server}/redoc")
    page.wait_for_selector("redoc h1, [role=navigation]", timeout=20_000)
    keep(page, "redoc-offline")
    assert blocked == []


def test_evals_list_links_each_evaluation_with_its_counts(page, server, research_lake):
    page.goto(f"{server}/evals")
    row = page.locator("#evals tr", has_text=EVAL_ID)
    stored = research_lake.sql("SELECT policy, successes, episodes FROM evals WHERE eval_id = ?", [EVAL_ID]).to_pylist()
    for r in stored:
        assert f"{r['policy']}: {r['successes']} / {r['episodes']}" in row.inner_text()
    keep(page, "evals")
    page.select_option("#compare-any select[name=left_policy]", "sft-r1")
    page.select_option("#compare-any select[name=right_policy]", "random:0")
    page.click("#compare-any button")
    page.wait_for_url("**/evals/compare?**", wait_until="domcontentloaded")
    assert page.locator("#compare-pairs a").count() > 0
    page.go_back()
    row.locator(f"a[href='/evals/{EVAL_ID}']").click()
    page.wait_for_url(f"**/evals/{EVAL_ID}", wait_until="domcontentloaded")
    assert page.locator("#eval-table").is_visible()


def test_dataset_pages_link_report_card_episodes_and_the_diff(page, server, research):
    ids = list(research["ids"].values())
    page.goto(f"{server}/datasets")
    keep(page, "datasets")
    page.click("#datasets a[href='/datasets/sft-mix/v1']")
    page.wait_for_url("**/datasets/sft-mix/v1", wait_until="domcontentloaded")
    linked = page.locator(".episode-ids a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert sorted(linked) == sorted(f"/episodes/{i}" for i in ids[:6])  # v1 holds ids[:6] (train and val)
    keep(page, "dataset-version")
    for link, text in (("#report", "sft-mix report"), ("#card", "A card.")):
        answer = page.request.get(server + page.locator(link).get_attribute("href"))
        assert answer.status == 200 and text in answer.text()
    page.click("a.diff")
    page.wait_for_url("**/datasets/sft-mix/diff?a=1&b=2", wait_until="domcontentloaded")
    assert page.locator("#episodes-removed").inner_text().startswith("removed: 1")
    assert page.locator("#episodes-added a").count() == len(set(ids[1:8]) - set(ids[:6]))
    keep(page, "dataset-diff")
    page.click("#episodes-removed a")
    page.wait_for_url(episode_url(ids[0]), wait_until="domcontentloaded")
    page.wait_for_selector("section.step.current")


def test_a_label_studio_page_loads_frames_by_signed_url_with_read_auth_on(page, locked_server, research):
    """Label Studio's own page (another origin, no session cookie) shows frames with signed URLs only."""
    from api.signing import FrameSigner

    sha = research["rollout"].steps[0].observation.sha256
    frame = f"{locked_server}/frames/{sha}.png"
    signed = f"{frame}?{FrameSigner.from_api_token(TOKEN).query(sha)}"
    page.context.clear_cookies()
    page.set_content(f'<img id="signed" src="{signed}"><img id="plain" src="{frame}">')
    page.wait_for_function("['signed', 'plain'].every(i => document.getElementById(i).complete)")
    sizes = page.evaluate("['signed', 'plain'].map(i => document.getElementById(i).naturalWidth)")
    assert sizes == [research["rollout"].device.width, 0]
