"""``@dshctl/agent-team``: the ``agentTeams`` service (experimental, opt-in, as in dsh). Needs the
``@dshctl/subagents`` row: teammates are its continuable children."""
from __future__ import annotations

name = "@dshctl/agent-team"
inject = ["agents", "subagents"]
schema = {"type": "object", "default": {}, "properties": {
    "maxMembers": {"type": "integer", "minimum": 1, "default": 8},
    "maxTasks": {"type": "integer", "minimum": 1, "default": 256},
    "maxPendingMessagesPerMember": {"type": "integer", "minimum": 1, "default": 64},
    "maxMessageBytes": {"type": "integer", "minimum": 1, "default": 65_536},
    "disposalTimeoutMs": {"type": "integer", "minimum": 1, "default": 5_000},
}}


def apply(ctx, config):
    from .service import TeamService
    service = TeamService(ctx, config)
    ctx.provide("agentTeams", service)
    ctx.effect(lambda: service.drain, "agentTeams.recovery()")
