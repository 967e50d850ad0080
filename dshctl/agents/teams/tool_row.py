"""``@dshctl/agent-team-tools``: the ten Agent Teams tools (dsh's ``tool-agent-team``). They take the
names ``list_agents``, ``send_message`` and ``interrupt_agent``, so the ``@dshctl/subagent-tools`` row
runs with ``control: false`` beside it (dsh's team composition drops its control row the same way).
Each Team member's requests also carry the Team guidance (``policy.py``) in their system prompt."""
from __future__ import annotations

name = "@dshctl/agent-team-tools"
inject = ["tools", "agentTeams", "agents"]
schema = {"type": "object", "default": {}, "properties": {
    "freshProvider": {"type": "string", "minLength": 1, "default": "spawn"},
    "forkProvider": {"type": "string", "minLength": 1, "default": "fork"},
}}


def apply(ctx, config):
    from .policy import section
    from .tools import TeamTools
    for tool in TeamTools(ctx, config).tools():
        ctx.tools.register(ctx, tool.name, tool)

    async def team_section(payload, next_):
        sections = await next_()
        teams = ctx.get("agentTeams")
        try:
            found = teams.try_membership(payload.get("agent")) if teams is not None else None
        except Exception:  # noqa: BLE001 - a refused Lead log: its Team tools answer the error, the prompt goes on
            found = None
        return sections if found is None else [*sections, section(found)]
    ctx.on("agent/system-sections", team_section)
