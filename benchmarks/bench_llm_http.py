"""The HTTP cost of a turn through ``@dshctl/llm-openai`` next to a minimal httpx client, side by side.

    .venv/bin/python benchmarks/bench_llm_http.py [--turns 50] [--repeat 3] [--only-interleaved]

A turn here is "a turn with 3 tool calls": one reply asking for three tools, then the answer — two
streamed requests to a scripted SSE server on 127.0.0.1 (tests/agents/sse_server.py) running in a child
process, so ``time.process_time()`` of this process is the client's CPU alone, every thread included:

- ``minimal``: one ``httpx.AsyncClient`` POSTs the same bodies and reads the lines (no parsing);
- ``adapter``: ``OpenAiModel.stream`` (body building, SSE parsing, chunk translation) on its one client;
- ``adapter, client per request``: the same with a new client (and CA bundle) per request, as before;
- ``host turn``: a whole turn on a host booted in process (``@dshctl/agents``, ``@dshctl/agent-loop``,
  ``@dshctl/llm-openai``, ``@dshctl/tool-todo``): the loop, the session log (appends, commits), the tool
  pipeline and the adapter;
- ``interleaved``: the minimal loop's two requests and a host turn alternated turn by turn on one server
  and one event loop, so the load of a shared machine weighs on both alike; the ratio per run is printed.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from dshctl.agents.llm.api import GenerateOptions  # noqa: E402
from dshctl.agents.llm.openai import OpenAiModel  # noqa: E402
from tests.agents.sse_server import Sse, chunk  # noqa: E402

TOOLS = [{"index": k, "id": f"call_{k}", "type": "function", "function": {"name": "todo_write", "arguments":
          json.dumps({"todos": [{"content": f"task {k}", "status": "pending"}]})}} for k in range(3)]
CALLS = Sse([chunk({"role": "assistant", "tool_calls": TOOLS}), chunk(finish="tool_calls"), "[DONE]"])
ANSWER = Sse([chunk({"role": "assistant", "content": w}) for w in "the files say alpha beta gamma".split()]
             + [chunk(finish="stop"), "[DONE]"])
MESSAGES = [{"id": "u", "role": "user", "content": [{"type": "text", "text": "read three files"}],
             "source": {"kind": "user"}}]


SERVER = """
import sys, time
sys.path.insert(0, %r)
from benchmarks.bench_llm_http import CALLS, ANSWER
from tests.agents.sse_server import SseServer
with SseServer() as server:
    server.script = [CALLS, ANSWER] * int(sys.argv[1])
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


class Server:
    """The scripted server in a child process (its CPU is not ours)."""

    def __init__(self, replies: int):
        root = str(Path(__file__).resolve().parents[1])
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER % root, str(replies)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.base_url = self.proc.stdout.readline().strip()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        self.proc.wait(10)


async def minimal(base_url: str, turns: int) -> float:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}).encode()
    async with httpx.AsyncClient() as client:
        start = time.process_time()
        for _ in range(turns * 2):
            async with client.stream("POST", f"{base_url}/chat/completions", content=body,
                                     headers={"Content-Type": "application/json"}) as resp:
                async for _line in resp.aiter_lines():
                    pass
        return time.process_time() - start


async def adapter(base_url: str, turns: int, *, fresh_client: bool) -> float:
    model = OpenAiModel({"baseUrl": base_url, "model": "m", "apiKey": "sk-bench"})
    options = GenerateOptions(provider="openai", model="m", messages=MESSAGES)
    start = time.process_time()
    for _ in range(turns * 2):
        if fresh_client:         # what every request paid before: a new client, the CA bundle loaded
            model._client = httpx.AsyncClient(timeout=model.timeout, verify=True)
            model._client_loop = asyncio.get_running_loop()
        async for _chunk in model.stream(options):
            pass
        if fresh_client:
            await model.aclose()
    spent = time.process_time() - start
    await model.aclose()
    return spent


def host_home(root: Path, base_url: str) -> Path:
    home = root / "home"
    pdir = home / "profiles" / "bench"
    bundle = pdir / "node_modules" / "@bench" / "agent"
    bundle.mkdir(parents=True)
    (pdir / "package.json").write_text(json.dumps({"dsh": {"profile": {"bundles": ["@bench/agent"]}}}))
    (bundle / "package.json").write_text(json.dumps({"name": "@bench/agent", "files": ["cordis.patch.yml"],
                                                     "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}))
    rows = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "@dshctl/llm-openai", "config": {"baseUrl": base_url, "model": "m"}},
            {"id": "agent-loop", "name": "@dshctl/agent-loop", "config": {"repeatLimit": 100000}},
            {"id": "tool-todo", "name": "@dshctl/tool-todo"}]
    (bundle / "cordis.patch.yml").write_text("- insert:\n" + "".join(f"    - {json.dumps(r)}\n" for r in rows))
    return home


async def host_turns(base_url: str, turns: int) -> float:
    from dshctl.host.hostlog import HostLog
    from dshctl.host.runner import Host, HostOptions
    with tempfile.TemporaryDirectory() as tmp:
        host = Host(HostOptions(home=host_home(Path(tmp), base_url), profile="bench", watch=False,
                                module_reload=False), HostLog("json", stream=io.StringIO()))
        await host.boot()
        try:
            agents = host.root.get("agents")
            spent = 0.0
            for n in range(turns):      # each turn a new session: the requests stay the same size
                agent = await agents.open(cwd=tmp)
                start = time.process_time()
                agent.followup("read three files")
                await agent.when_idle()
                if n:                   # the first turn pays imports and caches
                    spent += time.process_time() - start
            return spent * turns / (turns - 1)
        finally:
            await host.shutdown()


async def interleaved(base_url: str, turns: int) -> tuple[float, float]:
    """The minimal loop's two requests and a host turn, alternated turn by turn in one event loop, so a
    busy machine slows both alike: (minimal, host) CPU in total over the turns after the first."""
    from dshctl.host.hostlog import HostLog
    from dshctl.host.runner import Host, HostOptions
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        host = Host(HostOptions(home=host_home(Path(tmp), base_url), profile="bench", watch=False,
                                module_reload=False), HostLog("json", stream=io.StringIO()))
        await host.boot()
        spent = [0.0, 0.0]
        try:
            agents = host.root.get("agents")
            async with httpx.AsyncClient() as client:
                for n in range(turns):
                    start = time.process_time()
                    for _ in range(2):
                        async with client.stream("POST", f"{base_url}/chat/completions", content=body,
                                                 headers={"Content-Type": "application/json"}) as resp:
                            async for _line in resp.aiter_lines():
                                pass
                    middle = time.process_time()
                    agent = await agents.open(cwd=tmp)
                    opened = time.process_time()
                    agent.followup("read three files")
                    await agent.when_idle()
                    if n:
                        spent[0] += middle - start
                        spent[1] += time.process_time() - opened
        finally:
            await host.shutdown()
    return spent[0], spent[1]


def measure(turns: int, only_interleaved: bool = False) -> dict[str, float]:
    out = {}
    for label, run in () if only_interleaved else (("minimal httpx loop", lambda url: minimal(url, turns)),
                       ("adapter (one client)", lambda url: adapter(url, turns, fresh_client=False)),
                       ("adapter, client per request (before)", lambda url: adapter(url, turns, fresh_client=True)),
                       ("host turn (loop, log, tools, adapter)", lambda url: host_turns(url, turns))):
        with Server(turns + 1) as server:
            out[label] = asyncio.run(run(server.base_url)) / turns * 1000
    with Server(2 * turns + 1) as server:
        mini, whole = asyncio.run(interleaved(server.base_url, turns))
    out["interleaved: minimal"] = mini / (turns - 1) * 1000
    out["interleaved: host turn"] = whole / (turns - 1) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only-interleaved", action="store_true",
                        help="only the alternated runs (the ratio and its median), not each client alone")
    args = parser.parse_args()
    runs = [measure(args.turns, args.only_interleaved) for _ in range(args.repeat)]
    if args.only_interleaved:
        ratios = sorted(r["interleaved: host turn"] / r["interleaved: minimal"] for r in runs)
        print(f"host turn / minimal, interleaved turn by turn, {args.repeat} x {args.turns} turns: "
              f"{', '.join(f'{x:.2f}' for x in ratios)}; median {statistics.median(ratios):.2f} "
              f"(target <= 2); load {os.getloadavg()[0]:.1f}")
        return
    base = min(r["minimal httpx loop"] for r in runs)
    print(f"client CPU per turn (2 streamed requests, 3 tool calls), best of {args.repeat} x {args.turns} turns")
    for label in runs[0]:
        best = min(r[label] for r in runs)
        print(f"  {label:<40} {best:7.2f} ms   {best / base:5.1f}x minimal")
    ratios = sorted(r["interleaved: host turn"] / r["interleaved: minimal"] for r in runs)
    print(f"  host turn / minimal, interleaved turn by turn: {', '.join(f'{x:.2f}' for x in ratios)} "
          f"(target <= 2); load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
