"""Small awaitable helpers shared by the runtime modules."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable


class _Done:
    """An already-settled awaitable that needs no event loop (the cheap path for sync disposal)."""

    __slots__ = ()

    def __await__(self):
        return None
        yield  # pragma: no cover - makes this a generator

    def done(self) -> bool:
        return True


DONE = _Done()


def tick() -> Awaitable[None]:
    """One turn of the event loop: the runtime's unit of "later"."""
    return asyncio.sleep(0)


def is_awaitable(value: Any) -> bool:
    return inspect.isawaitable(value)


async def settle(value: Any) -> Any:
    """Await ``value`` if it is awaitable, else return it."""
    if inspect.isawaitable(value):
        return await value
    return value


def spawn(coro) -> asyncio.Task:
    return asyncio.get_running_loop().create_task(coro)


def callable_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
