"""``@dshctl/agent-presets``: preset discovery and session scopes (dsh-config.md §7).

The ``agentPresets`` service lists presets (roots re-scanned on every call), resolves ids with dsh's
error texts, and opens sessions: ``await open_session(ctx, session_id, preset_id=None)`` mounts the
preset's standing tree (once per process, shared by its sessions) and gives the session a tool scope
whose parent is the preset's layer of the tools registry (global -> preset -> session).
"""
from __future__ import annotations

from pathlib import Path

from dshctl.host.plugins.logger import log_for

name = "@dshctl/agent-presets"
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "default": {"type": "string", "default": "standard"},
        "roots": {"type": "array", "default": []},
        "includeUserRoot": {"type": "boolean", "default": True},
    },
}


class PresetError(Exception):
    pass


class AgentPresets:
    def __init__(self, ctx, config, home: Path):
        from dshctl.core.presets import ScanCache
        self.ctx = ctx
        self.config = config
        self.home = home
        self.cache = ScanCache()
        self.standing: dict[str, object] = {}   # preset id -> its mount (shared by sessions)
        self.sessions: dict[str, str] = {}      # session id -> preset id

    def roots(self):
        from dshctl.core.presets import assemble
        from dshctl.core.presets.roots import roots_from_row_config
        found = roots_from_row_config(self.config)
        return assemble(found.roots, self.home, include_user_root=found.include_user_root)

    def roster(self):
        from dshctl.core.presets import discover
        return discover(self.roots(), cache=self.cache)

    def list(self) -> list[dict]:
        return [{"id": p.id, "name": p.metadata.name or p.id, "trust": p.root.trust, "dir": p.dir_str,
                 "broken": p.health.broken} for p in self.roster().presets]

    def resolve(self, preset_id: str | None = None):
        preset_id = preset_id or self.config["default"]
        presets = {p.id: p for p in self.roster().presets}
        preset = presets.get(preset_id)
        if preset is None:
            available = ", ".join(p for p, v in presets.items() if v.health.ok) or "none"
            raise PresetError(f'agent-presets: preset "{preset_id}" not found (available: {available})')
        if not preset.health.ok:
            raise PresetError(f'agent-presets: preset "{preset_id}" failed to mount: {preset.health.broken}')
        return preset

    async def open_session(self, ctx, session_id: str, preset_id: str | None = None):
        """Join the preset's standing mount and create the session's tool scope (an effect of ``ctx``)."""
        from dshctl.host.plugins.preset_mount import ensure_standing
        preset = self.resolve(preset_id)
        await ensure_standing(self, preset)
        tools = ctx.get("tools")
        if tools is not None:
            parent = f"preset:{preset.id}" if f"preset:{preset.id}" in tools.scopes else "global"
            tools.scope(ctx, f"session:{session_id}", parent)
        self.sessions[session_id] = preset.id

        def close():
            self.sessions.pop(session_id, None)
        ctx.effect(lambda: close, f"agentPresets.session({session_id})")
        return preset.id


def apply(ctx, config):
    host = ctx.get("host")
    home = Path(host.options.home) if host is not None else Path.home() / ".dsh"
    service = AgentPresets(ctx, config, home)
    ctx.provide("agentPresets", service)
    log = log_for(ctx, "agent-presets")
    if log is not None:
        log.info("presets: " + ", ".join(p["id"] + ("" if not p["broken"] else " (broken)")
                                         for p in service.list()))
