"""Shared fixtures for the agent-layer tests.

Helpers of one area live in `tests/agents/<area>_helpers.py`; this file only holds what every area
needs, so the three areas never edit the same lines.
"""
import pytest


@pytest.fixture
def agent_home(tmp_path):
    """An empty dshctl home for one test (sessions, host state and config all land under it)."""
    home = tmp_path / "home"
    home.mkdir()
    return home
