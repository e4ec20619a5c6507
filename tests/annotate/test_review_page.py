"""The step review page in the real Label Studio, in Debian's headless Chromium at 1920x1080.

A mock phone's oracle episode (1080x2400 screenshots) is pushed with signed frame URLs
to a phoneloop API that requires the bearer token for reads: the annotator's browser
loads the frames through the signed URLs only. The screenshot is kept in the system's
temp folder (``phoneloop-review-page.png``) for people to look at.
"""

import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import uvicorn
from PIL import Image
from playwright.sync_api import sync_playwright

from annotate import push
from api.app import create_app
from api.settings import ApiSettings
from api.signing import FrameSigner
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Step
from mockphone import MockPhone
from mockphone.tasks import registry
from phones.episode import OraclePolicy, run_episode
from tests.annotate.conftest import free_port
from tests.browser import ARGS, CHROMIUM

TOKEN = "review-page-token-0123456789"


@pytest.fixture(scope="module")
def wifi_lake(tmp_path_factory):
    phone = MockPhone(seed=0)
    task = registry.get("SettingsWifiOff")(seed=1)
    ep = run_episode(phone, OraclePolicy(phone, task), task, seed=1, max_steps=100)
    lake = Lake.init(tmp_path_factory.mktemp("review") / "lake")
    lake.write_episodes([ep])
    return lake


@pytest.fixture(scope="module")
def locked_api(wifi_lake):
    """The phoneloop API with reads behind the bearer token."""
    port = free_port()
    settings = ApiSettings(token=TOKEN, auth_reads=True, webhook_secret="s3cret", refresh_s=0.0)
    server = uvicorn.Server(uvicorn.Config(create_app(Lake.open(wifi_lake.uri), settings), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def pushed(wifi_lake, locked_api, label_studio):
    with label_studio.client() as client:
        report = push.push(wifi_lake, client, f"review-page-{uuid.uuid4().hex[:8]}", where="s.step_index = 1", frames_url=locked_api,
                           sign=FrameSigner.from_api_token(TOKEN).query)
        (task,) = client.tasks(report.project_id)
    return report, task


def test_frames_load_through_signed_urls_with_read_auth_on(pushed, locked_api):
    _, task = pushed
    url = task["data"]["image"]
    assert url.startswith(f"{locked_api}/frames/") and "?token=" in url
    ok = httpx.get(url, trust_env=False)
    assert ok.status_code == 200 and ok.content[:8] == b"\x89PNG\r\n\x1a\n"
    bare = url.split("?")[0]
    assert httpx.get(bare, trust_env=False).status_code == 401
    other = task["data"]["after_image"].split("?")[0]
    assert httpx.get(f"{other}?{url.split('?')[1]}", trust_env=False).status_code == 401  # another frame's token
    expired = FrameSigner.from_api_token(TOKEN).token(bare.rsplit("/", 1)[1][:-4], expires=int(time.time()) - 1)
    assert httpx.get(f"{bare}?token={expired}", trust_env=False).status_code == 401
    assert httpx.get(bare, headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False).status_code == 200


def test_review_page_fits_a_1080p_screen(pushed, label_studio, tmp_path):
    report, task = pushed
    assert task["data"]["action_text"].startswith("step 2/") and "tap '" in task["data"]["action_text"]
    _in_browser(label_studio, report.project_id, task["id"], lambda page: _check_layout(page, tmp_path))


@pytest.fixture(scope="module")
def swiped(wifi_lake, locked_api, label_studio):
    """A one-step episode on a mock phone's screen whose action is a long upward swipe."""
    phone = MockPhone(seed=0)
    phone.reset(0)
    obs = phone.observe()
    swipe = Action("swipe", x=300, y=1900, x2=800, y2=700, duration_ms=300)
    ep = Episode(instruction="Scroll up", source="human", device=Device(1080, 2400, "mock"),
                 steps=(Step(observation=obs, action=swipe),), outcome="success", verified_by="human")
    Lake.open(wifi_lake.uri).write_episodes([ep])
    with label_studio.client() as client:
        report = push.push(Lake.open(wifi_lake.uri), client, f"swipe-{uuid.uuid4().hex[:8]}",
                           where="s.action_type = 'swipe'", frames_url=locked_api,
                           sign=FrameSigner.from_api_token(TOKEN).query)
        (task,) = client.tasks(report.project_id)
    return report, task, swipe


def test_review_page_draws_a_swipe_as_an_arrow_from_start_to_end(swiped, label_studio, tmp_path):
    report, task, swipe = swiped
    _in_browser(label_studio, report.project_id, task["id"], lambda page: _check_arrow(page, tmp_path, swipe))


@pytest.fixture(scope="module")
def unparsed(wifi_lake, locked_api, label_studio):
    """A step whose model output did not parse, pushed to a project, and an annotator added by the CLI's call."""
    from dataclasses import replace

    from annotate import people

    ep = Lake.open(wifi_lake.uri).episode(Lake.open(wifi_lake.uri).sql(
        "SELECT episode_id FROM episodes ORDER BY num_steps DESC LIMIT 1").column(0)[0].as_py())
    steps = list(ep.steps)
    steps[1] = replace(steps[1], action=Action("wait"), raw_output="invalid: no action\nI will tap the blue knob",
                       meta={"score": 0.31})
    Lake.open(wifi_lake.uri).write_episodes([replace(ep, steps=tuple(steps), episode_id="", instruction="unparsed")])
    with label_studio.client() as client:
        report = push.push(Lake.open(wifi_lake.uri), client, f"unparsed-{uuid.uuid4().hex[:8]}",
                           where="e.instruction = 'unparsed' AND s.step_index = 1", frames_url=locked_api,
                           sign=FrameSigner.from_api_token(TOKEN).query)
        (task,) = client.tasks(report.project_id)
        user = people.add_user(client, wifi_lake.uri, f"ann-{uuid.uuid4().hex[:8]}@example.com")
    return report, task, user


def test_an_annotator_logs_in_and_sees_an_unparsed_step_as_invalid_with_nothing_selected(unparsed, label_studio):
    report, task, user = unparsed

    def check(page):
        page.get_by_text("INVALID", exact=False).first.wait_for(timeout=90_000)
        for text in ("INVALID", "I will tap the blue knob", "score: 0.310"):
            assert page.get_by_text(text, exact=False).first.is_visible(), text
        page.get_by_text("Action type", exact=False).first.wait_for(timeout=30_000)
        checked = page.locator("input:checked:not(.lsf-radio-group-dm__input)")  # not the data manager's density
        assert checked.count() == 0  # no action type, no yes/no, no verdict pre-ticked

    _in_browser(label_studio, report.project_id, task["id"], check, login=(user["email"], user["password"]))


def _in_browser(label_studio, project_id: int, task_id: int, check, login: tuple[str, str] | None = None) -> None:
    """Log in to Label Studio in headless Chromium (1920x1080) and run ``check`` on the task's page
    (as the admin, or as ``login`` = (email, password))."""
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: run scripts/system-deps.sh"
    profile = tempfile.mkdtemp(prefix="phoneloop-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                           args=ARGS, viewport={"width": 1920, "height": 1080})
            try:
                page = context.new_page()
                page.goto(f"{label_studio.url}/user/login/")
                email, password = login or (label_studio.username, label_studio.password)
                page.fill("input[name=email]", email)
                page.fill("input[name=password]", password)
                page.click("button[type=submit]")
                page.wait_for_load_state("networkidle")
                assert "/user/login" not in page.url, f"{email} could not log in"
                page.goto(f"{label_studio.url}/projects/{project_id}/data?task={task_id}")
                check(page)
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def _check_arrow(page, tmp_path, swipe):
    """The before frame shows a straight arrow from the swipe's start to its end: along the
    segment it differs from the after frame (the same screen, nothing drawn), beside it not."""
    out = tmp_path / "swipe.png"
    deadline = time.monotonic() + 90
    while True:
        panes = _panes(page)
        page.screenshot(path=str(out))
        if len(panes) == 2 and all(_drawn(Image.open(out), box) for box in panes):
            break
        assert time.monotonic() < deadline, f"the frames did not show: {len(panes)} panes"
        page.wait_for_timeout(1000)
    page.wait_for_timeout(1000)  # regions are drawn after the image
    page.screenshot(path=str(out))
    shutil.copy(out, Path(tempfile.gettempdir()) / "phoneloop-review-swipe.png")
    shot = Image.open(out).convert("RGB")
    before, after = panes
    scale = before["width"] / 1080
    dx, dy = swipe.x2 - swipe.x, swipe.y2 - swipe.y
    norm = (dx * dx + dy * dy) ** 0.5
    side = (-dy / norm * 60, dx / norm * 60)  # 60 device px beside the path

    def differs(fx: float, fy: float) -> bool:
        here = shot.getpixel((round(before["x"] + fx * scale), round(before["y"] + fy * scale)))
        there = shot.getpixel((round(after["x"] + fx * scale), round(after["y"] + fy * scale)))
        return sum(abs(p - q) for p, q in zip(here, there)) > 60

    along = [(swipe.x + t / 20 * dx, swipe.y + t / 20 * dy) for t in range(3, 18)]
    assert sum(differs(x, y) for x, y in along) >= 13, "no arrow along the swipe's path"
    beside = [(x + sx * k, y + sy * k) for x, y in along for (sx, sy), k in ((side, 1), (side, -1))]
    assert sum(differs(x, y) for x, y in beside) <= 4, "the drawing strays from the straight path"


def _panes(page) -> list[dict]:
    """The two frame panes: Label Studio draws each image on a stack of canvases."""
    boxes = {}
    for canvas in page.locator("canvas").all():
        box = canvas.bounding_box()
        if box and box["width"] > 200:
            boxes.setdefault(round(box["x"]), box)
    return [boxes[x] for x in sorted(boxes)]


def _drawn(shot: Image.Image, box: dict) -> bool:
    """Whether the screenshot shows a phone screen in ``box`` (not a blank canvas)."""
    crop = shot.crop((int(box["x"]), int(box["y"]), int(box["x"] + box["width"]), int(min(box["y"] + box["height"],
                                                                                              1080))))
    colours = crop.convert("RGB").getcolors(maxcolors=1 << 16) or []
    white = sum(n for n, c in colours if min(c) > 245)
    return len(colours) > 20 and white < 0.95 * crop.width * crop.height


def _check_layout(page, tmp_path):
    out = tmp_path / "review.png"
    deadline = time.monotonic() + 90
    while True:
        panes = _panes(page)
        page.screenshot(path=str(out))  # the viewport only: what fits without scrolling
        shot = Image.open(out)
        if len(panes) == 2 and all(_drawn(shot, box) for box in panes):
            break
        assert time.monotonic() < deadline, f"the frames did not show: {len(panes)} panes"
        page.wait_for_timeout(1000)
    shutil.copy(out, Path(tempfile.gettempdir()) / "phoneloop-review-page.png")
    before, after = panes
    assert after["x"] >= before["x"] + before["width"] - 1  # side by side
    for box in (before, after):
        assert box["width"] >= 300 and box["y"] >= 0 and box["y"] + box["height"] <= 1080
    for text in ("Action type", "Was the recorded step correct?", "Reviewers only", "Note"):
        header = page.get_by_text(text, exact=False).first
        box = header.bounding_box()
        assert header.is_visible() and box["y"] + box["height"] <= 1080, text
    for choice in ("long_press", "yes", "reject"):
        box = page.locator("label", has_text=choice).first.bounding_box()  # the label shows its hotkey too
        assert box is not None and box["y"] + box["height"] <= 1080, choice
    submit = page.get_by_role("button", name="Submit")
    assert submit.is_visible() and submit.bounding_box()["y"] + submit.bounding_box()["height"] <= 1080
