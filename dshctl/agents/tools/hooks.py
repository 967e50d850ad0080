"""Event dispatch on the hot path: an event nobody listens to costs a dictionary look-up.

The runtime's waterfall bounds each chain with a timeout, which means a task and a wait per dispatch;
a step dispatches a dozen waterfalls, most of them with no listener. These helpers go straight to the
default then. A listener added at any time (a plugin loading) is seen by the next dispatch.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable


async def waterfall(ctx, name: str, *args: Any, default: Callable[[], Any]) -> Any:
    if not ctx.registry.events.has_listeners(name):
        value = default()
        return await value if inspect.isawaitable(value) else value
    return await ctx.waterfall(name, *args, default=default)


async def serial(ctx, name: str, *args: Any) -> Any:
    if not ctx.registry.events.has_listeners(name):
        return None
    return await ctx.serial(name, *args)
