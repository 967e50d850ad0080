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
