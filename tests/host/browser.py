"""Debian's chromium driven by Playwright for Python, for the browser app's tests: one browser per test
session (``browser`` fixture in conftest.py), never ``playwright install``.

``shoot(page, name)`` saves a screenshot under ``$DSHCTL_SCREENSHOTS`` (docs/webui/ when making the
docs' pictures) or the test's own temporary directory."""
from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        # a name an attacker's DNS would answer with 127.0.0.1: DNS rebinding without any DNS
        "--host-resolver-rules=MAP rebind.test 127.0.0.1"]


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def shoot(page, name: str, fallback: Path) -> Path:
    folder = Path(os.environ.get("DSHCTL_SCREENSHOTS") or fallback)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
