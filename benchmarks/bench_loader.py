"""Loader figures (issue 7): reconcile one changed row of an N-row tree, and mount 1,000 rows.

Run on demand: ``.venv/bin/python benchmarks/bench_loader.py``. Prints one line per measurement.
Targets: reconcile with one changed row of 1,000 rows < 20 ms and flat in N; mount 1,000 rows < 1 s.
"""
from __future__ import annotations

import asyncio
import logging
import statistics
import time

from dshctl.loader import Loader

logging.getLogger("dshctl.runtime").setLevel(logging.CRITICAL)


class Plain:
    name = "plain"

    def apply(self, ctx, config):
        ctx.effect(lambda: (lambda: None))


def rows(n: int, changed: int | None = None, value: int = 0) -> list:
    out = [{"id": f"r{i}", "name": "plain", "config": {"i": i, "v": 0}} for i in range(n)]
    if changed is not None:
        out[changed]["config"] = {"i": changed, "v": value}
    return out


async def measure(n: int, rounds: int = 15) -> tuple[float, float]:
    loader = Loader()
    loader.resolver.builtins["plain"] = Plain()
    start = time.perf_counter()
    await loader.start(rows(n), base_dir=".")
    mount = time.perf_counter() - start
    times = []
    for k in range(rounds):
        fresh = rows(n, changed=n // 2, value=k + 1)   # a fresh list, as composing again gives
        start = time.perf_counter()
        report = await loader.update(fresh)
        times.append(time.perf_counter() - start)
        assert report.action_of(f"r{n // 2}") == "restarted"
    swapped = []
    for k in range(3):   # a row appended (and the previous round's one removed)
        fresh = rows(n, changed=n // 2, value=rounds) + [{"id": f"extra{k}", "name": "plain"}]
        start = time.perf_counter()
        report = await loader.update(fresh)
        swapped.append(time.perf_counter() - start)
        assert report.action_of(f"extra{k}") == "started"
    moved = []
    for k in range(3):   # one row moved to the front: a reorder takes the full path
        fresh = rows(n, changed=n // 2, value=rounds)
        fresh.insert(0, fresh.pop(k + 1))
        start = time.perf_counter()
        await loader.update(fresh)
        moved.append(time.perf_counter() - start)
    await loader.stop()
    return mount, statistics.median(times), statistics.median(swapped), statistics.median(moved)


async def main() -> None:
    for n in (100, 1_000, 10_000):
        mount, changed, swapped, moved = await measure(n, rounds=15 if n < 10_000 else 5)
        print(f"rows={n:>6}  mount={mount * 1000:7.1f} ms  1 changed={changed * 1000:6.2f} ms"
              f" ({changed / n * 1e6:4.2f} us/row)  1 added+1 removed={swapped * 1000:6.2f} ms"
              f"  1 moved (full path)={moved * 1000:6.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
