"""Drivers for runtime tests: run a coroutine on a fresh loop, count ticks, read logged errors."""
from __future__ import annotations

import asyncio
import functools
import logging


def run_async(fn):
    """Decorator: run an ``async def`` test on its own event loop (no pytest-asyncio needed)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), timeout=10))
    return wrapper


async def ticks(n: int = 5) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def runtime_errors(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "dshctl.runtime" and r.levelno >= logging.ERROR]


class FakeClock:
    """Virtual milliseconds, like vitest's fake timers: ``sleep(ms)`` resolves only when ``advance``
    moves the clock past its deadline, with the loop drained between timers (advanceTimersByTimeAsync).
    """

    def __init__(self) -> None:
        self.now = 0
        self._timers: list[tuple[int, int, asyncio.Future]] = []

    def sleep(self, ms: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._timers.append((self.now + ms, len(self._timers), future))
        return future

    async def advance(self, ms: int) -> None:
        end = self.now + ms
        await ticks(20)
        while True:
            due = sorted(t for t in self._timers if t[0] <= end and not t[2].done())
            if not due:
                break
            self.now = due[0][0]
            due[0][2].set_result(None)
            await ticks(20)
        self.now = end
