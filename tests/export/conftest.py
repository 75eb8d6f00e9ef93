"""The export wing's shared fixture: one headless Chromium per test module (tests/helpers/browser.py launches it)."""

import pytest

from browser import chromium_browser


@pytest.fixture(scope="module")
def chromium():
    with chromium_browser() as browser:
        yield browser
