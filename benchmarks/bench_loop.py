"""Agent loop overhead and concurrency, on a real host booted in process.

    .venv/bin/python benchmarks/bench_loop.py [--steps 200] [--sessions 100] [--model-ms 20]

1. Overhead per step with 3 tool calls, model time excluded: one turn of ``--steps`` steps, each reply
   asking for three parallel-safe no-op tools (distinct arguments, so the repeat guard stays quiet),
   then a text reply. The time spent inside the model's stream (a zero-delay model here) is measured
   around the adapter and subtracted; what remains is the loop: pre-step and turn-stopping dispatch,
   request assembly from the log, chunk logging, the tool pipeline and scheduler, every append
   validated, the turn's durable commits. Target: <= 2 ms.
2. ``--sessions`` sessions at once on one host: each opens a fresh session and runs one turn (a step
   with one tool call, then the answer) against a model that takes ``--model-ms`` per reply. Prints
   the wall time, per-turn latency percentiles and how many turns completed.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dshctl.agents.llm.script import reply_chunks  # noqa: E402
from dshctl.host.hostlog import HostLog  # noqa: E402
from dshctl.host.runner import Host, HostOptions  # noqa: E402

MODEL = '''
import asyncio, time
from dshctl.agents.llm.script import reply_chunks
from dshctl.agents.tools.definition import Tool

name = "bench-model"
schema = {"type": "object", "default": {}}
inject = ["tools"]

class Model:
    provider, model = "bench", "bench"
    def __init__(self, config):
        self.config = config
        self.model_s = 0.0
        self.model_cpu = 0.0
    async def stream(self, options):
        start, cpu = time.perf_counter(), time.process_time()
        last_prompt = max(i for i, m in enumerate(options.messages) if m["source"]["kind"] == "user")
        steps = sum(1 for m in options.messages[last_prompt:] if m["role"] == "assistant")
        if steps < self.config["steps"]:
            calls = [{"name": "noop", "arguments": {"i": steps, "k": k}} for k in range(self.config["calls"])]
            reply = {"toolCalls": calls}
        else:
            reply = {"text": "done"}
        chunks = reply_chunks(reply, steps + 1)
        if self.config["delayMs"]:
            await asyncio.sleep(self.config["delayMs"] / 1000)
        self.model_s += time.perf_counter() - start
        self.model_cpu += time.process_time() - cpu
        for chunk in chunks:
            yield chunk
            start, cpu = time.perf_counter(), time.process_time()
        self.model_s += time.perf_counter() - start
        self.model_cpu += time.process_time() - cpu

def apply(ctx, config):
    ctx.provide("llm", Model(config))
    ctx.tools.register(ctx, "noop", Tool("noop", "does nothing", lambda args, run: "ok",
                                         {"type": "object"}, is_concurrency_safe=lambda a: True))
'''


def make_home(root: Path, steps: int, calls: int, delay_ms: int) -> Path:
    home = root / "home"
    pdir = home / "profiles" / "bench"
    bundle = pdir / "node_modules" / "@bench" / "agent"
    bundle.mkdir(parents=True)
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": ["@bench/agent"]}}}))
    (bundle / "package.json").write_text(json.dumps({"name": "@bench/agent", "files": ["cordis.patch.yml"],
                                                     "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    (bundle / "model.py").write_text(MODEL)
    rows = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "./model.py", "config": {"steps": steps, "calls": calls, "delayMs": delay_ms}},
            {"id": "agent-loop", "name": "@dshctl/agent-loop", "config": {"repeatLimit": 1000}}]
    (bundle / "cordis.patch.yml").write_text("- insert:\n" + "".join(f"    - {json.dumps(r)}\n" for r in rows))
    return home


async def with_host(home: Path, job):
    host = Host(HostOptions(home=home, profile="bench", watch=False, module_reload=False),
                HostLog("json", stream=io.StringIO()))
    await host.boot()
    try:
        return await job(host)
    finally:
        await host.shutdown()


class AppendClock:
    """CPU time spent in SessionLog.append (validation, copy), to show what the log costs per step."""

    def __init__(self):
        from dshctl.agents.session.log import SessionLog
        self.cpu = 0.0
        original = SessionLog.append
        clock = self

        def append(log, *args, **kw):
            start = time.process_time()
            try:
                return original(log, *args, **kw)
            finally:
                clock.cpu += time.process_time() - start
        SessionLog.append = append


async def overhead(host, steps: int) -> dict:
    agents, model = host.root.get("agents"), host.root.get("llm")
    clock = AppendClock()
    agent = await agents.open()
    agent.followup("warm up")
    await agent.when_idle()                      # first turn: imports, validators, caches
    model.model_s = model.model_cpu = clock.cpu = 0.0
    first = len(agent.session.events)
    start, cpu = time.perf_counter(), time.process_time()
    agent.followup("go")
    await agent.when_idle()
    total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
    n = steps + 1
    return {"steps": n, "total_ms": total * 1000, "model_ms": model.model_s * 1000,
            "per_step_ms": (total - model.model_s) * 1000 / n,
            "per_step_cpu_ms": (total_cpu - model.model_cpu) * 1000 / n,
            "append_cpu_ms": clock.cpu * 1000 / n, "events": len(agent.session.events) - first}


async def concurrent(host, sessions: int) -> dict:
    agents = host.root.get("agents")
    opened = [await agents.open() for _ in range(sessions)]
    latencies = []

    async def one(agent):
        t = time.perf_counter()
        agent.followup("hello")
        await agent.when_idle()
        latencies.append(time.perf_counter() - t)
    start = time.perf_counter()
    await asyncio.gather(*(one(a) for a in opened))
    wall = time.perf_counter() - start
    completed = sum(1 for a in opened for e in a.session.events
                    if e["type"] == "turn/end" and e["data"]["reason"]["kind"] == "completed")
    q = statistics.quantiles(latencies, n=100)
    return {"sessions": sessions, "wall_s": wall, "completed": completed, "p50_ms": q[49] * 1000,
            "p95_ms": q[94] * 1000, "max_ms": max(latencies) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--model-ms", type=int, default=20)
    args = parser.parse_args()
    assert reply_chunks  # the model module imports it too; fail here if the contract moved
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp) / "a", args.steps, 3, 0)
        o = asyncio.run(with_host(home, lambda h: overhead(h, args.steps)))
        print(f"loop overhead, 3 tool calls per step, over {o['steps']} steps ({o['events']} events logged): "
              f"wall {o['per_step_ms']:.3f} ms/step, CPU {o['per_step_cpu_ms']:.3f} ms/step "
              f"(of which session-log appends {o['append_cpu_ms']:.3f}) "
              f"(turn {o['total_ms']:.1f} ms, model {o['model_ms']:.1f} ms; load average {os.getloadavg()[0]:.1f})"
              f"  target <= 2 ms: {'met' if o['per_step_cpu_ms'] <= 2 else 'NOT met'} (CPU)")
        home = make_home(Path(tmp) / "b", 1, 1, args.model_ms)
        c = asyncio.run(with_host(home, lambda h: concurrent(h, args.sessions)))
        print(f"{c['sessions']} concurrent sessions, model {args.model_ms} ms/reply, 2 steps each: "
              f"wall {c['wall_s'] * 1000:.0f} ms, turn latency p50 {c['p50_ms']:.0f} ms, p95 {c['p95_ms']:.0f} ms, "
              f"max {c['max_ms']:.0f} ms; {c['completed']}/{c['sessions']} completed")


if __name__ == "__main__":
    main()
