"""``@dshctl/timer``: ticks every ``interval`` seconds, emitting ``timer/tick(count)``.

It also provides the ``timer`` service: ``set_timeout(ctx, seconds, fn)`` and ``sleep(seconds)``; a
timeout is an effect of the caller's context, so it is cancelled when the caller unloads.
"""
from __future__ import annotations

import asyncio

from dshctl.host.plugins.logger import log_for

name = "@dshctl/timer"
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "interval": {"type": "number", "exclusiveMinimum": 0, "default": 5},
        "log": {"type": "boolean", "default": True},
    },
}


class Timer:
    def __init__(self) -> None:
        self.ticks = 0

    @staticmethod
    def set_timeout(ctx, seconds: float, fn):
        def start():
            handle = asyncio.get_running_loop().call_later(seconds, fn)
            return handle.cancel
        return ctx.effect(start, "timer.set_timeout()")

    @staticmethod
    async def sleep(seconds: float) -> None:
        await asyncio.sleep(seconds)


def apply(ctx, config):
    timer = Timer()
    ctx.provide("timer", timer)

    async def tick_forever():
        while True:
            await asyncio.sleep(config["interval"])
            timer.ticks += 1
            log = log_for(ctx, "timer")  # looked up per tick: the logger row may start later
            if config["log"] and log is not None:
                log.info(f"tick {timer.ticks}")
            ctx.emit("timer/tick", timer.ticks)

    def start():
        return asyncio.get_running_loop().create_task(tick_forever()).cancel
    ctx.effect(start, "timer.interval")
