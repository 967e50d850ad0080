"""Fixtures for the host's tests: ``browser``, one headless chromium for all the browser tests.

Module scope, not session: Playwright's sync API keeps its event loop marked as running on the main
thread while it is open, and every later test that calls ``asyncio.run`` would fail. The browser tests
live in one module (test_webui_browser.py), so this is still one browser for all of them."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    from .browser import launch
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()
