"""Small awaitable helpers shared by the runtime modules."""
from __future__ import annotations

import asyncio
from typing import Any


class _Done:
    """An already-settled awaitable that needs no event loop (the cheap path for sync disposal)."""

    __slots__ = ()

    def __await__(self):
        return None
        yield  # pragma: no cover - makes this a generator

    def done(self) -> bool:
        return True


DONE = _Done()


def is_settled(result: Any) -> bool:
    """True for results of a dispose call that need no waiting."""
    if result is None or result is DONE:
        return True
    done = getattr(result, "done", None)
    return done is not None and done()


def spawn(coro) -> asyncio.Task:
    return asyncio.get_running_loop().create_task(coro)


def callable_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
