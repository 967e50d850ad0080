"""Fiber states and the INACTIVE epoch sentinel."""
from __future__ import annotations

from enum import IntEnum


class State(IntEnum):
    PENDING = 0
    LOADING = 1
    ACTIVE = 2
    FAILED = 3
    DISPOSED = 4
    UNLOADING = 5


class _Inactive:
    """The epoch of a fiber with an unmet dependency (valid epochs are tuples of provider uids)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "INACTIVE"


INACTIVE = _Inactive()
