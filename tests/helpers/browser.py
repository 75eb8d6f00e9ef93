"""fraglab's page in a real headless Chromium, through Playwright's Python API, for the page tests."""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest


def chromium_path() -> str | None:
    for name in (os.environ.get("FRAGLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def require_chromium():
    """(playwright.sync_api, Chromium's path); the test is skipped, with the reason, where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install fraglab[dev])")
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set FRAGLAB_CHROMIUM)")
    return sync_api, exe


@contextmanager
def chromium_browser():
    """A headless Chromium (Playwright's Browser), closed on leaving; skipped, with the reason, where there is none.
    The one launch of every page test (the `chromium` fixture of tests/export/conftest.py, and chromium_page)."""
    sync_api, exe = require_chromium()
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # root in a container
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=args)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_page(path: Path, width: int, height: int):
    """The page file at `path` open in headless Chromium: (page, page errors, the URLs it asked for beyond
    file:, each refused)."""
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": width, "height": height})
        errors: list[str] = []
        outside: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.route(re.compile(r"^(?!file:).*"), lambda route: (outside.append(route.request.url), route.abort()))
        page.goto(path.as_uri())
        yield page, errors, outside
