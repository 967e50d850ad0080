"""Code Mode figures (docs/performance.md): worker start -> first instruction of the program, and 50 tool
calls made from a program vs the same 50 calls made directly through the tool pipeline.

    .venv/bin/python benchmarks/bench_codemode.py [--runs 30]

"Start" is taken just before the worker is spawned; "first instruction" is the wall time at which the
program's first statement runs (``time.time()`` in the worker, the same clock). The 50 calls go through
``dshctl.agents.tools.pipeline.dispatch`` either way (a real tools registry, a tool that sleeps 2 ms, so a
call costs what a small real tool costs); the direct side runs them one after another, as a model's 50
sequential steps' tool calls would, without any model time.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.codemode.bridge import SubCallBridge  # noqa: E402
from dshctl.agents.codemode.pool import WorkerPool  # noqa: E402
from dshctl.agents.codemode.runtime import Limits, Namespace, run_program  # noqa: E402
from dshctl.agents.tools.definition import Tool  # noqa: E402
from dshctl.agents.tools.pipeline import dispatch  # noqa: E402
from dshctl.host.plugins.tools import ToolRegistry  # noqa: E402
from dshctl.runtime import Context  # noqa: E402

CALLS = 50


class Agent:
    def __init__(self, ctx, registry):
        self.ctx, self.registry = ctx, registry
        self.abort_event = asyncio.Event()
        self.call_counts: dict = {}
        self.repeat_limit = 10 ** 9
        self.events: list = []

    def tool_view(self):
        return self.registry.view()

    def restricted(self, name):
        return False

    def append(self, kind, data):
        self.events.append((kind, data))


async def start_latency(runs: int, pool: WorkerPool | None) -> list[float]:
    """Cold (``pool`` None): spawn included. Pre-started: the row's waiting worker, spawned between runs."""
    out = []
    for _ in range(runs):
        if pool is not None:
            pool.prestart()                      # as the plugin does when a run ends
            await asyncio.sleep(0.5)             # the time between two runs (at least one model round trip)
        started = time.time()
        result = await run_program("import time\nreturn time.time()", [Namespace("tools", {})], Limits(),
                                   worker=pool.take() if pool else None)
        out.append((result.value - started) * 1000)
    return out


async def calls_ratio(runs: int, pool: WorkerPool | None) -> tuple[list[float], list[float]]:
    ctx = Context()
    registry = ToolRegistry()
    ctx.provide("tools", registry)

    async def work(args, run):
        await asyncio.sleep(0.002)
        return f"item {args['i']}"
    registry.register(ctx, "work", Tool("work", "a 2 ms tool", work,
                                        {"type": "object", "properties": {"i": {"type": "integer"}}}))
    agent = Agent(ctx, registry)
    program = f"out = []\nfor i in range({CALLS}):\n    out.append(await tools.work({{'i': i}}))\nreturn len(out)"
    direct, coded = [], []
    for _ in range(runs):
        agent.call_counts = {}
        started = time.perf_counter()
        for i in range(CALLS):
            await dispatch(agent, {"id": f"d{i}", "name": "work", "arguments": f'{{"i": {i}}}'}, turn=1, step=1)
        direct.append((time.perf_counter() - started) * 1000)
        agent.call_counts = {}
        bridge = SubCallBridge(agent, "outer", turn=1, step=1, dispatch=dispatch,
                               classify=lambda name, args: (False, []))
        if pool is not None:
            pool.prestart()
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        result = await run_program(program, [Namespace("tools", {"work": bridge.binding("work")})], Limits(),
                                   worker=pool.take() if pool else None)
        coded.append((time.perf_counter() - started) * 1000)
        assert result.value == CALLS, result
    return direct, coded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    for label, prestart in (("cold spawn", False), ("pre-started (the plugin's default)", True)):
        async def measure():
            pool = WorkerPool(1) if prestart else None
            try:
                return await start_latency(runs, pool), await calls_ratio(max(runs // 3, 5), pool)
            finally:
                if pool is not None:
                    pool.close()
        starts, (direct, coded) = asyncio.run(measure())
        d, c = statistics.median(direct), statistics.median(coded)
        print(f"[{label}] worker start -> first instruction: median {statistics.median(starts):.1f} ms, "
              f"p90 {sorted(starts)[int(0.9 * len(starts))]:.1f} ms over {runs} runs (target <= 150 ms)")
        print(f"[{label}] {CALLS} calls direct: median {d:.1f} ms; from one program: median {c:.1f} ms; "
              f"ratio {c / d:.2f} (target <= 1.5)")

if __name__ == "__main__":
    main()
