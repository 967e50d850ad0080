"""``@dshctl/subagent-tool``: one more delegation tool, as dsh's ``tool-subagent`` row is loaded once per
instance. Each row names its ``toolName`` and its own child options (``agentOptions.model`` above all), so
one parent can delegate to children of two models in one step: ``subagent`` from
``@dshctl/subagent-tools`` and, say, ``subagent_pro`` from a row of this kind."""
from __future__ import annotations

from .tool_row import AGENT_OPTIONS, TOOL_FILTER

name = "@dshctl/subagent-tool"
inject = ["tools", "subagents", "agents"]
schema = {"type": "object", "required": ["toolName"], "properties": {
    "provider": {"type": "string", "minLength": 1, "default": "spawn"},
    "toolName": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]*$"},
    "backgroundMode": {"enum": ["one-shot", "continuable"], "default": "continuable"},
    "enableRunInBackground": {"type": "boolean", "default": True},
    "maxDepth": {"type": "integer", "minimum": 0, "default": 1},
    "agentOptions": AGENT_OPTIONS,
    "persona": {"type": "string"},
    "toolFilter": TOOL_FILTER,
}}


def apply(ctx, config):
    from .tools import DelegationTool
    tool = DelegationTool(ctx, dict(config)).tool(config["toolName"])
    ctx.tools.register(ctx, config["toolName"], tool)
