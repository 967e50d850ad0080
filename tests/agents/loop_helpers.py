"""Helpers of the loop and tool tests: a runtime with the real tools registry, and an agent stand-in
shaped as the pipeline's documented duck type (ctx, tool_view, restricted, abort_event, call_counts)."""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from dshctl.host.plugins.tools import ToolRegistry
from dshctl.runtime import Context


class BareAgent:
    def __init__(self, ctx, registry, scope: str = "global"):
        self.ctx, self.registry, self.scope = ctx, registry, scope
        self.abort_event = asyncio.Event()
        self.call_counts: dict = {}
        self.session = None

    def tool_view(self):
        return self.registry.view(self.scope)

    def restricted(self, name):
        return any(name in s.own for s in self.registry.scopes.values())


def runtime_with_tools():
    ctx = Context()
    registry = ToolRegistry()
    ctx.provide("tools", registry)
    return ctx, registry


def call(name: str, args, call_id: str = "c1") -> dict:
    return {"id": call_id, "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}


class Timeline:
    """Start/end times of tool bodies, to show overlap (or its absence)."""

    def __init__(self):
        self.spans: dict[str, list[float]] = {}

    def sleeper(self, seconds: float):
        async def body(args, run):
            self.spans[args["tag"]] = [time.monotonic()]
            await asyncio.sleep(seconds)
            self.spans[args["tag"]].append(time.monotonic())
            return f"slept {args['tag']}"
        return body

    def overlap(self, a: str, b: str) -> bool:
        (s1, e1), (s2, e2) = self.spans[a], self.spans[b]
        return s1 < e2 and s2 < e1


REPO = Path(__file__).resolve().parents[2]
