"""``@dshctl/subagents``: the ``subagents`` service with the in-process ``spawn`` and ``fork`` providers.
Its tools are the separate ``@dshctl/subagent-tools`` row (tool_row.py)."""
from __future__ import annotations

name = "@dshctl/subagents"
inject = ["agents"]
schema = {"type": "object", "default": {}, "properties": {
    "maxConcurrent": {"type": "integer", "minimum": 1, "default": 5},
    "recover": {"type": "boolean", "default": True},     # close crash-cut children at start (recovery.py)
}}


def apply(ctx, config):
    from .providers import InProcessProvider
    from .service import SubagentRuntime
    runtime = SubagentRuntime(ctx, config["maxConcurrent"])
    for provider_name, fork in (("spawn", False), ("fork", True)):
        runtime.register_provider(InProcessProvider(provider_name, fork=fork, gate=runtime.gate))
    ctx.provide("subagents", runtime)
    ctx.effect(lambda: runtime.drain, "subagents.activations()")
    if config["recover"]:
        ctx.effect(lambda: _recovering(runtime), "subagents.recover()")


def _recovering(runtime):
    import asyncio

    from .recovery import recover
    task = asyncio.ensure_future(recover(runtime))
    runtime.recovered = task
    return task.cancel

