"""dsh's tools on a real workspace: an agent stand-in whose session header names the workspace (its cwd)."""
from __future__ import annotations

from types import SimpleNamespace

from dshctl.agents.tools.pipeline import dispatch
from tests.agents.loop_helpers import BareAgent, call, runtime_with_tools

FILE_CONFIG = {"readLimit": 2000, "readMaxLineLength": 2000, "readMaxBytes": 50 * 1024}
SEARCH_CONFIG = {"globMaxResults": 100, "grepMaxMatches": 250}
BASH_CONFIG = {"timeoutMs": 120000, "maxTimeoutMs": 600000, "maxOutputBytes": 64000, "graceMs": 2000, "env": {},
               "enableRunInBackground": True}


def agent_with(root, *tool_sets, session_id: str = "s-1"):
    ctx, registry = runtime_with_tools()
    for tools in tool_sets:
        for tool in tools:
            registry.register(ctx, tool.name, tool)
    agent = BareAgent(ctx, registry)
    agent.session = SimpleNamespace(header={"id": session_id, "cwd": str(root)})
    return agent


class Caller:
    def __init__(self, agent):
        self.agent = agent
        self.n = 0

    async def __call__(self, name: str, args) -> dict:
        self.n += 1
        return await dispatch(self.agent, call(name, args, f"c{self.n}"), turn=1, step=self.n)

    async def text(self, name: str, args) -> str:
        result = await self(name, args)
        return result["content"][0]["text"]


def text(result) -> str:
    return result["content"][0]["text"]
