"""Fixtures for the differential suite against the real dsh (see real_dsh.py)."""
from __future__ import annotations

import pytest

from .real_dsh import RealDsh, set_up


@pytest.fixture(scope="session")
def real_dsh() -> RealDsh:
    try:
        return RealDsh(set_up())
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
