"""``@dshctl/agent-loop``: the loop registered as the ``agents`` service's factory.

It injects ``agents``, ``llm`` and ``tools``, so a change of the ``llm`` row restarts it (its agents are
retired and come back from their logs on next use). Each agent gets a child fiber holding its tool
scope: through ``agentPresets`` when that row runs (global → preset → session, the preset's standing
tree mounted once and shared), else a session scope directly under the global layer.
"""
from __future__ import annotations

from dshctl.runtime import InlinePlugin

from .agent import Agent

name = "@dshctl/agent-loop"
inject = ["agents", "llm", "tools"]
schema = {"type": "object", "default": {}, "properties": {
    "maxParallelToolCalls": {"type": "integer", "minimum": 1, "default": 8},
    "system": {"type": "string"},
    "model": {"type": "string"},
    "maxTokens": {"type": "integer", "minimum": 1},
    "repeatLimit": {"type": "integer", "minimum": 1, "default": 3},
    "cwd": {"type": "string"},
    # one model reply, as streamed: an endless stream ends the turn with STREAM_TOO_LONG (issue 28)
    "maxReplyChunks": {"type": "integer", "minimum": 1, "default": 100_000},
    "maxReplyBytes": {"type": "integer", "minimum": 1, "default": 32 * 1024 * 1024},
}}


class PresetNotAvailable(RuntimeError):
    pass


class AgentLoop:
    def __init__(self, ctx, config: dict):
        self.ctx = ctx
        self.config = config
        self.max_parallel = config["maxParallelToolCalls"]
        self.scopes: dict[str, object] = {}     # agent id -> its fiber

    def llm(self, agent=None):
        """The adapter for ``agent``: the ``llm`` row, or the routed row (``route: true``) that its
        ``provider`` option names when that differs from the ``llm`` row's provider."""
        default = self.ctx.llm
        provider = ((agent.options or {}).get("provider") if agent is not None else None)
        if not provider or provider == getattr(default, "provider", None):
            return default
        from dshctl.agents.llm.api import route_service
        routed = self.ctx.get(route_service(provider))
        if routed is None:
            raise RuntimeError(f'no llm row serves provider "{provider}": add an llm row with provider: '
                               f'{provider} and route: true, or drop the provider option')
        return routed

    def tools_of(self, agent) -> list:
        from dshctl.agents.tools.definition import as_tool
        out = []
        for tool_name, definition in sorted(agent.tool_view().items()):
            try:
                out.append(as_tool(tool_name, definition))
            except TypeError:
                continue   # not callable by the loop (e.g. a declaration only); the model never sees it
        return out

    async def create(self, log, *, preset: str | None, options: dict) -> Agent:
        from dshctl.agents.session.history import latest_agent_preset
        merged = {k: self.config[k] for k in ("system", "model", "maxTokens", "repeatLimit") if k in self.config}
        merged.update({k: v for k, v in options.items() if v is not None})
        agent = Agent(self, log.id, log, merged, f"session:{log.id}")
        selected = latest_agent_preset(log.events)
        agent.preset = preset or (selected or {}).get("agentPreset") or log.header.get("agentPreset")
        await self._open_scope(agent, explicit=preset is not None)
        return agent

    async def _open_scope(self, agent, *, explicit: bool) -> None:
        fiber = self.ctx.plugin(InlinePlugin(apply=lambda ctx: None, name=f"agent:{agent.id}"))
        await fiber
        self.scopes[agent.id] = fiber
        presets = self.ctx.get("agentPresets")
        if presets is None and explicit:
            await self.release(agent)
            raise PresetNotAvailable(f'preset "{agent.preset}" asked for, but no @dshctl/agent-presets row '
                                     "runs in this profile")
        if presets is not None:
            try:
                chosen = await presets.open_session(fiber.ctx, agent.id, agent.preset)
            except Exception as exc:  # noqa: BLE001 - PresetError and mount failures
                if explicit or agent.preset is not None:
                    await self.release(agent)
                    raise PresetNotAvailable(str(exc)) from None
                chosen = None
            if chosen is not None:
                if chosen != _logged_preset(agent):
                    agent.append("agent-preset/selected", {"agentPreset": chosen})
                    agent.session.commit()
                agent.preset = chosen
                return
        restrict = agent.options.get("toolFilter") or {}   # a sub-agent's filter (dshctl/agents/subagents)
        self.ctx.tools.scope(fiber.ctx, agent.tool_scope, "global", deny=restrict.get("deny") or (),
                             allow=restrict.get("allow"))

    async def select_preset(self, agent, preset: str) -> None:
        """Switch a live, idle agent to another preset (a new scope; the log records the choice)."""
        await agent.when_idle()
        await self.release(agent)
        agent.preset = preset
        await self._open_scope(agent, explicit=True)

    async def release(self, agent) -> None:
        fiber = self.scopes.pop(agent.id, None)
        if fiber is not None:
            await fiber.dispose()


def _logged_preset(agent):
    from dshctl.agents.session.history import latest_agent_preset
    return (latest_agent_preset(agent.session.events) or {}).get("agentPreset")


def apply(ctx, config):
    loop = AgentLoop(ctx, config)
    ctx.effect(lambda: ctx.agents.set_factory(loop), "agents.setFactory()")
