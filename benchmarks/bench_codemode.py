"""Code Mode figures (docs/performance.md): worker start -> first instruction of the program, and 50 tool
calls made from a program vs the same 50 calls made directly through the tool pipeline.

    .venv/bin/python benchmarks/bench_codemode.py [--runs 30]

"Start" is taken just before the worker is spawned; "first instruction" is the wall time at which the
program's first statement runs (``time.time()`` in the worker, the same clock). The 50 calls go through
``dshctl.agents.tools.pipeline.dispatch`` either way (a real tools registry, a tool that sleeps 2 ms, so a
call costs what a small real tool costs); the direct side runs them one after another, as a model's 50
sequential steps' tool calls would, without any model time — once through bare ``dispatch`` and once as
the loop runs a model's calls (``run_tool_calls``: scheduler, ``tool/call``/``tool/result`` appended to a
real session log; the program's sub-calls append their ``tool/code-dispatch*`` events to the same log).
"""
from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.codemode.bridge import SubCallBridge  # noqa: E402
from dshctl.agents.codemode.pool import WorkerPool  # noqa: E402
from dshctl.agents.codemode.runtime import Limits, Namespace, run_program  # noqa: E402
from dshctl.agents.tools.definition import Tool  # noqa: E402
from dshctl.agents.session.store import SessionStore  # noqa: E402
from dshctl.agents.tools.pipeline import dispatch  # noqa: E402
from dshctl.agents.tools.scheduler import run_tool_calls  # noqa: E402
from dshctl.host.plugins.tools import ToolRegistry  # noqa: E402
from dshctl.runtime import Context  # noqa: E402

CALLS = 50


class Agent:
    """The pipeline's duck type, with a real session log (both sides log their events to it)."""

    def __init__(self, ctx, registry, session):
        self.ctx, self.registry, self.session = ctx, registry, session
        self.abort_event = asyncio.Event()
        self.call_counts: dict = {}
        self.repeat_limit = 10 ** 9

    def tool_view(self):
        return self.registry.view()

    def restricted(self, name):
        return False

    def open_turn(self) -> int:
        self.turn = getattr(self, "turn", 0) + 1
        self.append("turn/start", {"turn": self.turn})
        return self.turn

    def close_turn(self) -> None:
        self.append("turn/end", {"turn": self.turn, "reason": {"kind": "completed"}})

    def append(self, kind, data, **extra):
        return self.session.append(kind, data, **extra)


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


async def calls_ratio(runs: int, pool: WorkerPool | None) -> tuple[list[float], list[float], list[float]]:
    ctx = Context()
    registry = ToolRegistry()
    ctx.provide("tools", registry)

    async def work(args, run):
        await asyncio.sleep(0.002)
        return f"item {args['i']}"
    registry.register(ctx, "work", Tool("work", "a 2 ms tool", work,
                                        {"type": "object", "properties": {"i": {"type": "integer"}}}))
    home = tempfile.mkdtemp(prefix="bench-codemode-")
    agent = Agent(ctx, registry, SessionStore(home).create())
    program = f"out = []\nfor i in range({CALLS}):\n    out.append(await tools.work({{'i': i}}))\nreturn len(out)"
    direct, stepped, coded = [], [], []
    for _ in range(runs):
        agent.call_counts = {}
        started = time.perf_counter()
        for i in range(CALLS):
            await dispatch(agent, {"id": f"d{i}", "name": "work", "arguments": f'{{"i": {i}}}'}, turn=1, step=1)
        direct.append((time.perf_counter() - started) * 1000)
        agent.call_counts = {}
        turn = agent.open_turn()
        started = time.perf_counter()
        for i in range(1, CALLS + 1):   # as the loop runs a model's calls: scheduler, tool/call + tool/result logged
            agent.append("step/start", {"turn": turn, "step": i})
            await run_tool_calls(agent, turn, i, [{"id": f"s{turn}.{i}", "name": "work", "arguments": f'{{"i": {i}}}'}])
            agent.append("step/end", {"turn": turn, "step": i})
        stepped.append((time.perf_counter() - started) * 1000)
        agent.close_turn()
        agent.call_counts = {}
        turn = agent.open_turn()
        agent.append("step/start", {"turn": turn, "step": 1})
        bridge = SubCallBridge(agent, f"outer{turn}", turn=turn, step=1, dispatch=dispatch,
                               classify=lambda name, args: (False, []))
        if pool is not None:
            pool.prestart()
        await asyncio.sleep(0.5)
        started = time.perf_counter()
        result = await run_program(program, [Namespace("tools", {"work": bridge.binding("work")})], Limits(),
                                   worker=pool.take() if pool else None)
        coded.append((time.perf_counter() - started) * 1000)
        assert result.value == CALLS, result
        agent.append("step/end", {"turn": turn, "step": 1})
        agent.close_turn()
        agent.session.commit()
    shutil.rmtree(home, ignore_errors=True)
    return direct, stepped, coded


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
        starts, (direct, stepped, coded) = asyncio.run(measure())
        d, t, c = statistics.median(direct), statistics.median(stepped), statistics.median(coded)
        print(f"[{label}] worker start -> first instruction: median {statistics.median(starts):.1f} ms, "
              f"p90 {sorted(starts)[int(0.9 * len(starts))]:.1f} ms over {runs} runs (target <= 150 ms)")
        print(f"[{label}] {CALLS} calls: direct through dispatch {d:.1f} ms, as the loop runs them (scheduler and "
              f"log) {t:.1f} ms, from one program {c:.1f} ms; ratio {c / d:.2f} / {c / t:.2f} (target <= 1.5)")

if __name__ == "__main__":
    main()
