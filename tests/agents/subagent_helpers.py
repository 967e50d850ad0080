"""Homes with the sub-agent rows on the scripted model, and dshctl's side of the tool differential."""
from __future__ import annotations

import json

from tests.agents.loop_rows import agent_rows
from tests.host.helpers import InProcess, make_home

SUBAGENT_ROWS = [{"id": "subagents", "name": "@dshctl/subagents"},
                 {"id": "subagent-tools", "name": "@dshctl/subagent-tools"}]


def subagent_home(tmp_path, replies, *, tools_config: dict | None = None, extra_rows: list | None = None,
                  subagents_config: dict | None = None):
    rows = [dict(SUBAGENT_ROWS[0], config=subagents_config or {}),
            dict(SUBAGENT_ROWS[1], config=tools_config or {}), *(extra_rows or [])]
    text = agent_rows(replies) + "".join(f"    - {json.dumps(row)}\n" for row in rows)
    return make_home(tmp_path, text)


def call(name: str, args: dict, call_id: str | None = None) -> dict:
    out = {"name": name, "arguments": args}
    if call_id:
        out["id"] = call_id
    return out


def tool_results(agent) -> list[str]:
    return [b["text"] for e in agent.session.events if e["type"] == "tool/result"
            for r in e["data"]["message"]["content"] for b in r["content"] if b["type"] == "text"]


async def subagent_tool_texts(tmp_path, calls) -> list[str]:
    """dshctl's results for ``calls``, made by the scripted model in one turn of a fresh session."""
    replies = [{"toolCalls": [call(name, args)]} for name, args in calls] + [{"text": "done"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("Work.")
        await agent.when_idle()
        return tool_results(agent)


def notices(agent) -> list[dict]:
    """The settlement notices ``agent`` received (user messages with source ``subagent-settled``)."""
    return [e["data"] for e in agent.session.events if e["type"] == "user/message"
            and e["data"]["source"]["kind"] == "subagent-settled"]
