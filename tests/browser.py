"""Headless Chromium for the browser tests: Debian's build driven by Playwright (never `playwright install`)."""

import shutil
import tempfile
from contextlib import contextmanager

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]  # containers often have a tiny /dev/shm


@contextmanager
def chromium(width: int, height: int):
    """A browser context with a fresh profile and a ``width`` x ``height`` viewport, closed and removed after."""
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: run scripts/system-deps.sh (scripts/test.sh does)"
    profile = tempfile.mkdtemp(prefix="phoneloop-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                           args=ARGS, viewport={"width": width, "height": height})
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
