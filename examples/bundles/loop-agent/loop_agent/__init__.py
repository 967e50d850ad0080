"""``dsh-loop-agent`` for dshctl's host: the ``loop-runner`` row.

A supervisor polls the live agent registry (``agents``) once a second and gives every root agent a
driver (driver.py) that waits for ``/forever``; the global switch and the continuation override live in
the profile's sidecar (state.py), also reachable over HTTP (routes.py). Everything is an effect of this
row, so disabling it (``- id: loop-runner`` / ``disabled: true``) stops every driver and removes the
routes, live.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from .answers import approval_decision
from .driver import Driver, text_of as _text, was_armed
from .state import read_state, sidecar_path, stamp
from .template import is_forever

name = "dsh-loop-agent"
inject = ["agents", "http"]
DEFAULT_CONTINUATION = "继续，并深度检查暗病，遇到暗病和缺陷就修复"
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "continuation": {"type": "string", "default": DEFAULT_CONTINUATION},
    "initialBackoffMs": {"type": "number", "minimum": 0, "default": 1000},
    "maxBackoffMs": {"type": "number", "minimum": 0, "default": 32000},
    "backoffFactor": {"type": "number", "minimum": 1, "default": 2},
    "idleGraceMs": {"type": "number", "minimum": 0, "default": 300000},
    "quiet": {"type": "boolean", "default": False},
    "autoAnswerQuestions": {"type": "boolean", "default": True},
    "autoAnswerFreeText": {"type": "boolean", "default": True},
    "autoApproveActions": {"type": "boolean", "default": True},
    "escalateAfterFailures": {"type": "integer", "minimum": 0, "default": 3},
    # dshctl's addition, for tests and slow machines: how often the supervisor looks (README: 1 s).
    "pollIntervalMs": {"type": "number", "minimum": 10, "default": 1000},
}}


class LoopRunner:
    def __init__(self, ctx, config: dict, home: Path, profile: str):
        self.ctx, self.config, self.profile = ctx, config, profile
        self.sidecar = sidecar_path(home, profile)
        self.poll_s = config["pollIntervalMs"] / 1000
        self.drivers: dict[str, Driver] = {}
        self._state, self._stamp = read_state(self.sidecar), stamp(self.sidecar)

    def log(self, message: str, level: str = "info") -> None:
        logger = self.ctx.get("logger")
        if logger is not None and (level != "info" or not self.config["quiet"]):
            getattr(logger, level)(message)

    def refresh(self):
        """Re-read the sidecar when it changed; switching off disarms every driver at once."""
        now = stamp(self.sidecar)
        if now != self._stamp:
            self._stamp, self._state = now, read_state(self.sidecar)
            if self._state.disabled:
                for driver in self.drivers.values():
                    if driver.armed:
                        driver.disarm("the loop is switched off")
        return self._state

    def continuation(self) -> str:
        return self.refresh().continuation or self.config["continuation"]

    def attached_agents(self) -> int:
        if not self.refresh().enabled:
            return 0
        return sum(1 for d in self.drivers.values() if d.armed and not d.agent.disposed)

    # ---- the supervisor -------------------------------------------------------------------------
    def archived(self) -> frozenset:
        workspace = self.ctx.get("workspace")
        return workspace.archived_session_ids if workspace is not None else frozenset()

    def sweep(self) -> None:
        live, archived = self.ctx.agents.live, self.archived()
        for agent_id, driver in list(self.drivers.items()):
            if live.get(agent_id) is not driver.agent:
                self.drivers.pop(agent_id).detach()
            elif driver.agent.session.id in archived:
                # Archived: stop its loop and cancel its reply; unarchiving does not revive it.
                self.drivers.pop(agent_id)
                driver.disarm("the session was archived")
                driver.detach()
                driver.agent.abort({"kind": "hook", "reason": "session archived"})
        for agent_id, agent in list(live.items()):
            if agent_id not in self.drivers and _is_root(agent) and agent.session.id not in archived:
                driver = self.drivers[agent_id] = Driver(self, agent)
                if was_armed(agent.session.events) and self.refresh().enabled:
                    driver.resume()

    async def supervise(self) -> None:
        while True:
            self.refresh()
            self.sweep()
            await asyncio.sleep(self.poll_s)

    def close(self) -> None:
        for driver in self.drivers.values():
            driver.detach()
        self.drivers.clear()

    # ---- hooks ----------------------------------------------------------------------------------
    async def on_pre_step(self, payload, next_):
        """``/forever`` arms this session (only while the switch is on) and never reaches the model."""
        decision = await next_()
        messages = decision.get("messages") if isinstance(decision, dict) else None
        keep = [m for m in messages or [] if not (m.get("role") == "user" and is_forever(_text(m)))]
        if messages is None or len(keep) == len(messages):
            return decision
        self.sweep()
        driver = self.drivers.get(payload["agent"].id)
        if driver is None:
            self.log("/forever ignored: sub-agents never get a loop", "warn")
        elif not self.refresh().enabled:
            self.log("/forever ignored: the loop is switched off (POST /api/loop-agent/enabled)", "warn")
        else:
            driver.activate(payload["turn"])
        return {**decision, "messages": keep}

    async def on_approval(self, payload, next_):
        """The ``approval/request`` waterfall of the approval service (``ctx.approval``): a question from
        a session this runner drives while armed is allowed once, so an endless loop never waits on a
        prompt nobody watches. Policy ``never`` is decided by the service before it asks anyone (the
        call is rejected); the service logs the ``approval/asked`` / ``approval/decided`` pair."""
        driver = self.drivers.get(getattr(payload.get("agent"), "id", None))
        if driver is None or not driver.armed or not self.config["autoApproveActions"]:
            return await next_()
        self.log(f"approval for {payload.get('toolName') or 'an action'} allowed once (autoApproveActions)")
        return approval_decision(payload.get("policy"))


def _is_root(agent) -> bool:
    header = getattr(agent.session, "header", {}) or {}
    return header.get("origin") != "subagent" and not header.get("parentSession") \
        and not (agent.options or {}).get("parent")


def apply(ctx, config):
    from .routes import install

    host = ctx.get("host")
    home = Path(host.options.home) if host is not None else Path.home() / ".dsh"
    profile = host.options.profile if host is not None else "web"
    runner = LoopRunner(ctx, config, home, profile)
    ctx.on("agent/pre-step", runner.on_pre_step)
    ctx.on("approval/request", runner.on_approval)
    install(ctx, runner)
    task = asyncio.ensure_future(runner.supervise())

    def stop():
        task.cancel()
        runner.close()
    ctx.effect(lambda: stop, "loop-runner supervisor")
