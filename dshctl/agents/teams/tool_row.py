"""``@dshctl/agent-team-tools``: the ten Agent Teams tools (dsh's ``tool-agent-team``). They take the
names ``list_agents``, ``send_message`` and ``interrupt_agent``, so the ``@dshctl/subagent-tools`` row
runs with ``control: false`` beside it (dsh's team composition drops its control row the same way)."""
from __future__ import annotations

name = "@dshctl/agent-team-tools"
inject = ["tools", "agentTeams", "agents"]
schema = {"type": "object", "default": {}, "properties": {
    "freshProvider": {"type": "string", "minLength": 1, "default": "spawn"},
    "forkProvider": {"type": "string", "minLength": 1, "default": "fork"},
}}


def apply(ctx, config):
    from .tools import TeamTools
    for tool in TeamTools(ctx, config).tools():
        ctx.tools.register(ctx, tool.name, tool)
