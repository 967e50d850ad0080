"""Fixtures for the differential suite against the real dsh (see real_dsh.py).

The plugin interop tests reuse the bundle tests' real git fixtures (source repositories, a git
daemon on 127.0.0.1) and their npm registry server."""
from __future__ import annotations

import pytest

from bundles.conftest import git_daemon, repos  # noqa: F401 - fixtures re-exported for tests/dsh

from .real_dsh import RealDsh, set_up


@pytest.fixture(scope="session")
def real_dsh() -> RealDsh:
    try:
        return RealDsh(set_up())
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def small_registry():
    """A real npm registry on 127.0.0.1 holding only what a test adds (no universe to build)."""
    from bundles.npm_registry import Registry, Server

    server = Server(Registry())
    try:
        yield server.registry
    finally:
        server.close()
