"""Homes with the Agent Teams rows on the scripted model, and dshctl's side of the Team tool differential."""
from __future__ import annotations

from tests.agents.subagent_helpers import call, subagent_home, tool_results
from tests.host.helpers import InProcess

TEAM_ROWS = [{"id": "agent-team", "name": "@dshctl/agent-team"},
             {"id": "agent-team-tools", "name": "@dshctl/agent-team-tools"}]


def team_home(tmp_path, replies, *, team_config: dict | None = None, tools_config: dict | None = None,
              extra_rows: list | None = None):
    rows = [dict(TEAM_ROWS[0], config=team_config or {}), dict(TEAM_ROWS[1], config=tools_config or {}),
            *(extra_rows or [])]
    return subagent_home(tmp_path, replies, tools_config={"control": False}, extra_rows=rows)


async def team_tool_texts(tmp_path, calls) -> tuple[str, list[str]]:
    """The Lead's id and dshctl's results for ``calls``, made by the scripted model in one turn."""
    replies = [{"toolCalls": [call(name, args)]} for name, args in calls] + [{"text": "done"}]
    async with InProcess(team_home(tmp_path, replies)) as host:
        agent = await host.root.get("agents").open()
        agent.followup("Work.")
        await agent.when_idle()
        return agent.id, tool_results(agent)
