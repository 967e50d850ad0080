"""Fixtures for the host's tests: ``browser``, one headless chromium for the whole test session."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    from .browser import launch
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()
