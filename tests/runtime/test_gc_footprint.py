"""Mounting many fibers keeps the cyclic GC's work linear (docs/performance.md, ## Runtime).

CPython's oldest generation is rescanned whenever the objects promoted into it grow by a quarter, so
every GC-tracked object a fiber keeps alive (or leaves queued in the loop) is scanned again and again
as the host grows. These tests pin the per-fiber footprint and check nothing is left for the collector.
"""
from __future__ import annotations

import asyncio
import gc

from dshctl.runtime import Context, State

N = 2000


def trivial(ctx, config):
    return None


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_plugged_fibers_keep_three_tracked_objects_each_until_disposed():
    async def main():
        root = Context()
        before = _tracked()
        fibers = [root.plugin(trivial) for _ in range(N)]
        queued = (_tracked() - before) / N          # before the first tick: the reload steps are queued
        for fiber in fibers:
            await fiber
        mounted = (_tracked() - before) / N
        for fiber in fibers:
            fiber.dispose()
        for fiber in fibers:
            await fiber.wait(raise_error=False)
        assert all(f.state is State.DISPOSED for f in fibers)
        del fibers
        left = _tracked() - before
        return queued, mounted, left

    gc.disable()
    try:
        queued, mounted, left = asyncio.run(main())
    finally:
        gc.enable()
    # Fiber, Context and the parent's ctx.plugin() handle. A per-fiber loop callback (Handle + bound
    # method + contextvars copy) would add 3 while queued; a generic EffectHandle with a collected
    # bound fiber.dispose in a list would add 2 for the fiber's whole life.
    assert queued <= 3.1, queued
    assert mounted <= 3.1, mounted
    assert left < 50, left                     # disposed fibers leave nothing behind for the collector


def test_disposed_fibers_leave_only_the_fiber_ctx_cycle():
    async def main():
        root = Context()
        fibers = [root.plugin(trivial) for _ in range(N)]
        for fiber in fibers:
            await fiber
        for fiber in fibers:
            await fiber.dispose()
        del fibers, fiber

    gc.collect()
    gc.disable()
    try:
        asyncio.run(main())
        unreachable = gc.collect()
    finally:
        gc.enable()
    # What is left is the fiber <-> ctx pair (with the fiber's attribute dict and epoch tuple): a plugin
    # may keep its ctx, and ctx.fiber must still answer "inactive". The ctx.plugin() handle is not part
    # of the cycle (with it and its disposer list: 6 objects per fiber).
    assert unreachable <= 4 * N + 50, unreachable / N
