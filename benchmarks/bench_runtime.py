#!/usr/bin/env python3
"""Runtime benchmarks (run on demand, not part of the test suite).

    .venv/bin/python benchmarks/bench_runtime.py

1. Mount N trivial plugins under the root, wait until all are ACTIVE, then dispose them all
   (target: N = 10,000 under 1 s).
2. Replace the provider of a service that M plugins inject, and wait until all M dependents have
   restarted (target: M = 1,000 under 200 ms).
Each is run at 1x, 2x and 4x size to show the cost is linear; the best of 3 runs is printed.
"""
from __future__ import annotations

import asyncio
import gc
import time

from dshctl.runtime import Context, State


def trivial(ctx, config):
    return None


async def mount_and_dispose(n: int) -> float:
    root = Context()
    start = time.perf_counter()
    fibers = [root.plugin(trivial) for _ in range(n)]
    for fiber in fibers:
        await fiber
    assert all(f.state is State.ACTIVE for f in fibers)
    for fiber in fibers:
        fiber.dispose()
    for fiber in fibers:
        await fiber.wait(raise_error=False)
    elapsed = time.perf_counter() - start
    assert all(f.state is State.DISPOSED for f in fibers) and len(root.registry) == 0
    return elapsed


async def replace_provider(m: int) -> float:
    root = Context()
    restarts = [0]

    def provider(ctx, config):
        ctx.provide("svc", config)

    def dependent(ctx):
        restarts[0] += 1

    dependent.inject = ["svc"]
    old = await root.plugin(provider, "old")
    fibers = [root.plugin(dependent) for _ in range(m)]
    for fiber in fibers:
        await fiber
    restarts[0] = 0
    start = time.perf_counter()
    await old.dispose()
    await root.plugin(provider, "new")
    for fiber in fibers:
        await fiber
    elapsed = time.perf_counter() - start
    assert restarts[0] == m and all(f.state is State.ACTIVE and f.ctx.svc == "new" for f in fibers)
    return elapsed


def best_of(runs: int, scenario, size: int, collector: bool) -> tuple[float, int]:
    """The best time of ``runs`` and the number of full (generation 2) collections during it."""
    best = (float("inf"), 0)
    for _ in range(runs):
        gc.collect()
        if not collector:
            gc.disable()
        full_before = gc.get_stats()[2]["collections"]
        try:
            seconds = asyncio.run(scenario(size))
        finally:
            gc.enable()
        best = min(best, (seconds, gc.get_stats()[2]["collections"] - full_before))
    return best


def report(title: str, scenario, base: int, target: float) -> None:
    """Figures with CPython's cyclic GC on (what a host sees) and paused (the runtime's own cost)."""
    print(title)
    print(f"  {'size':>6}   {'gc on':>9} {'ratio':>6} {'full gc':>7}   {'gc paused':>9} {'ratio':>6}")
    first: dict[bool, float] = {}
    for factor in (1, 2, 4):
        size = base * factor
        row = []
        for collector in (True, False):
            seconds, full = best_of(3, scenario, size, collector)
            first.setdefault(collector, seconds)
            row.append(f"{seconds * 1000:7.1f}ms {seconds / first[collector]:5.2f}x"
                       + (f" {full:>7}" if collector else ""))
        verdict = f"   target < {target * 1000:.0f} ms (gc on): " + (
            "ok" if first[True] < target else "MISSED") if factor == 1 else ""
        print(f"  {size:>6}   {row[0]}   {row[1]}{verdict}")


def main() -> None:
    report("mount + dispose N trivial plugins", mount_and_dispose, 10_000, 1.0)
    report("replace a service with M dependents (all restart)", replace_provider, 1_000, 0.2)


if __name__ == "__main__":
    main()
