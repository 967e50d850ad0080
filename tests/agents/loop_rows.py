"""Rows and test plugins for homes that run the agent loop (written into the test bundle)."""
from __future__ import annotations

import json

from tests.host.helpers import bundle_dir, make_home, write

# A test plugin: tools with timings (sleep_par: parallel-safe, sleep_ex: exclusive), a tool that
# concludes the turn, and hooks the tests switch on through its config.
PROBE = '''
import asyncio, time
from dshctl.agents.tools.definition import Tool

name = "probe"
inject = ["tools"]
schema = {"type": "object", "default": {}}
SPANS = {}

async def sleep(args, run):
    start = time.monotonic()
    await asyncio.sleep(args.get("ms", 100) / 1000)
    SPANS[args["tag"]] = (start, time.monotonic())
    return {"content": [{"type": "text", "text": "slept " + args["tag"]}],
            "meta": {"start": start, "end": SPANS[args["tag"]][1]}}   # timings for the log, not the model

def finish(args, run):
    return {"content": [{"type": "text", "text": "done"}], "concludesTurn": True}

def apply(ctx, config):
    sleep_schema = {"type": "object", "required": ["tag"],
                    "properties": {"tag": {"type": "string"}, "ms": {"type": "integer"}}}
    ctx.tools.register(ctx, "sleep_par", Tool("sleep_par", "sleep, parallel-safe", sleep, sleep_schema,
                                               is_concurrency_safe=lambda a: True))
    ctx.tools.register(ctx, "sleep_ex", Tool("sleep_ex", "sleep, exclusive", sleep, sleep_schema))
    ctx.tools.register(ctx, "finish", Tool("finish", "conclude the turn", finish))
    ctx.tools.register(ctx, "echo", Tool("echo", "say it back", lambda args, run: str(args.get("text")),
                                         is_concurrency_safe=lambda a: True))
    ctx.provide("probe", SPANS)
    if config.get("reject"):
        async def pre_step(payload, next_):
            if any(config["reject"] in b.get("text", "") for m in payload["messages"] for b in m["content"]):
                return {"kind": "reject"}
            return await next_()
        ctx.on("agent/pre-step", pre_step)
    if config.get("steerOnce"):
        def steer(payload):
            if payload["stopping"] and payload["step"] == 1:
                payload["agent"].steer(config["steerOnce"])
        ctx.on("agent/turn-stopping", steer)
    if config.get("stopAfterStep"):
        def stopping(payload):
            if payload["step"] >= config["stopAfterStep"] and not payload["stopping"]:
                return {"kind": "stop", "reason": "probe stops at step %d" % payload["step"]}
        ctx.on("agent/turn-stopping", stopping)
'''


def agent_rows(replies: list[dict] | None = None, *, probe: dict | None = None, guard: dict | None = None,
               loop: dict | None = None, fs_root: str | None = None, script: str | None = None) -> str:
    llm_config = {"script": script} if script else {"replies": replies or []}
    rows = [
        {"id": "tools", "name": "@dshctl/tools"},
        {"id": "agents", "name": "@dshctl/agents", "config": {"compression": "zstd"}},
        {"id": "llm", "name": "@dshctl/llm-script", "config": llm_config},
        {"id": "agent-loop", "name": "@dshctl/agent-loop", "config": loop or {}},
        {"id": "ask-user", "name": "@dshctl/ask-user"},
    ]
    if fs_root is not None:
        rows.append({"id": "fs-tools", "name": "@dshctl/fs-tools", "config": {"root": fs_root}})
    if probe is not None:
        rows.append({"id": "probe", "name": "./plugins/probe.py", "config": probe})
    if guard is not None:
        rows.append({"id": "loop-guard", "name": "@dshctl/loop-guard", "config": guard})
    return "".join(f"    - {json.dumps(row)}\n" for row in rows)


def agent_home(tmp_path, replies=None, **kw):
    home = make_home(tmp_path, agent_rows(replies, **kw))
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    return home


def types(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


def without_chunks(events: list[dict]) -> list[str]:
    return [t for t in types(events) if t != "assistant/chunk"]
