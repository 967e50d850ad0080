"""``@dshctl/agents``: the ``agents`` service, the registry of live agents (dsh's ``agents``).

It owns no loop: a factory (``@dshctl/agent-loop``, or any plugin replacing it) registers itself with
``set_factory`` as an effect. When the factory goes away (its row unloads, or restarts because the
``llm`` row changed), its live agents are disposed — a running turn ends ``aborted`` (cause
``disposed``) and its log is committed and closed — and later requests restore them from the session
log through the next factory: sessions survive, agents are cheap.

A new session records its working directory in the header (so it lands in
``sessions/--<cwd>--/``, where dsh groups a workspace's sessions): the one the request names, else the
host's own working directory when the row started — as dsh's host API defaults to ``process.cwd()``.
A resumed session keeps the directory it was created in.
"""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

name = "@dshctl/agents"
schema = {"type": "object", "default": {}, "properties": {
    "compression": {"enum": ["zstd", "none"], "default": "zstd"},
    "keepIdle": {"type": "integer", "minimum": 0, "default": 8},
    "idleReleaseMs": {"type": "integer", "minimum": 0, "default": 300_000},
}}


class NoAgentLoop(RuntimeError):
    pass


class BadSessionCwd(ValueError):
    """A request named a working directory that is not an absolute path."""


class AgentRegistry:
    def __init__(self, ctx, home: Path, compression: str, cwd: str | None = None):
        self.ctx = ctx
        self.home = home
        self.compression = compression
        self.cwd = cwd                    # the working directory of sessions created without one
        self.factory = None
        self.live: dict[str, object] = {}
        self._store = None
        self._opening: dict[str, asyncio.Future] = {}
        self.keep_idle = 8                # config keepIdle
        self.idle_release_s = 300.0       # config idleReleaseMs / 1000
        self._holds: dict[str, int] = {}
        self._idle_since: dict[str, float] = {}        # agent id -> when its last holder let go
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._retiring: dict[str, asyncio.Task] = {}   # agent id -> its closing task

    # ---- idle release ----------------------------------------------------------------------------
    # Issue 28: each live agent holds its session's ``.lock`` fd. A client ``hold``s an agent while it
    # drives a turn and ``let_go``es after; an agent nobody holds and that runs no turn is retired after
    # ``idleReleaseMs``, and at once when more than ``keepIdle`` such agents are live (least recently
    # used first). The next request restores it from its log.
    def hold(self, agent) -> None:
        """``agent`` is being driven by a client: not released until ``let_go``."""
        self._holds[agent.id] = self._holds.get(agent.id, 0) + 1
        self._idle_since.pop(agent.id, None)
        timer = self._timers.pop(agent.id, None)
        if timer is not None:
            timer.cancel()

    def let_go(self, agent) -> None:
        left = self._holds.get(agent.id, 1) - 1
        if left > 0:
            self._holds[agent.id] = left
            return
        self._holds.pop(agent.id, None)
        if self.live.get(agent.id) is not agent:
            return
        loop = asyncio.get_running_loop()
        self._idle_since[agent.id] = loop.time()
        self._timers[agent.id] = loop.call_later(self.idle_release_s, self._release_later, agent)
        self._trim()

    def _releasable(self, agent) -> bool:
        return self.live.get(agent.id) is agent and agent.id not in self._holds \
            and agent.id not in self._opening and agent.status != "running"

    def _release_later(self, agent) -> None:
        self._timers.pop(agent.id, None)
        if self._releasable(agent):
            self._retire_soon(agent.id)

    def _trim(self) -> None:
        idle = sorted((since, aid) for aid, since in self._idle_since.items()
                      if aid in self.live and self._releasable(self.live[aid]))
        for _since, aid in idle[:max(0, len(idle) - self.keep_idle)]:
            self._retire_soon(aid)

    def _retire_soon(self, agent_id: str) -> None:
        """Out of ``live`` now (a new request restores it from the log), closed in a task that
        ``drop_all`` waits for."""
        agent = self.live.pop(agent_id, None)
        self._forget(agent_id)
        if agent is not None:
            task = self._retiring[agent_id] = asyncio.ensure_future(self._retire(agent))
            task.add_done_callback(lambda _t: self._retiring.pop(agent_id, None))

    def _forget(self, agent_id: str) -> None:
        self._idle_since.pop(agent_id, None)
        self._holds.pop(agent_id, None)
        timer = self._timers.pop(agent_id, None)
        if timer is not None:
            timer.cancel()

    @property
    def store(self):
        if self._store is None:
            from dshctl.agents.session.store import SessionStore
            self._store = SessionStore(self.home, compression=self.compression)
        return self._store

    def set_factory(self, factory):
        """Install ``factory``; returns the disposer (the effect's inverse)."""
        previous, self.factory = self.factory, factory

        async def restore():
            if self.factory is factory:
                self.factory = previous
            await self.drop_all(lambda agent: agent.loop is factory)
        return restore

    async def drop_all(self, which=lambda agent: True) -> None:
        doomed = [a for a in self.live.values() if which(a)]
        for agent in doomed:
            self.live.pop(agent.id, None)
            self._forget(agent.id)
        await asyncio.gather(*(self._retire(a) for a in doomed), *self._retiring.values(),
                             return_exceptions=True)

    async def _retire(self, agent) -> None:
        try:
            await agent.dispose()
        finally:
            await agent.loop.release(agent)
            agent.session.close()
            # the next restore (after a host restart) then decodes nothing of what this one wrote
            await asyncio.to_thread(self.store.checkpoint, agent.session.id)

    def get(self, agent_id: str):
        return self.live.get(agent_id)

    def list(self) -> list[dict]:
        return [{"id": a.id, "status": a.status, "preset": a.preset, "turns": a.last_turn}
                for a in self.live.values()]

    async def open(self, session_id: str | None = None, *, preset: str | None = None,
                   cwd: str | None = None, options: dict | None = None):
        """The live agent of ``session_id`` (restored from its log if needed), or a new session's agent."""
        if self.factory is None:
            raise NoAgentLoop("no agent loop is running (add an @dshctl/agent-loop row and an llm row)")
        if session_id is not None and session_id not in self.live and session_id not in self._opening:
            # a unique prefix names a session too (with or without dsh's "session-")
            session_id = await asyncio.to_thread(self.store.resolve, session_id,
                                                 (*self.live, *self._opening))
        if session_id is not None and session_id in self.live:
            agent = self.live[session_id]
            if preset is not None and preset != agent.preset:
                await agent.loop.select_preset(agent, preset)
            return agent
        if session_id is not None and session_id in self._opening:
            return await asyncio.shield(self._opening[session_id])
        if session_id in self._retiring:  # its lock is being released: wait, then look again
            await asyncio.gather(self._retiring[session_id], return_exceptions=True)
            return await self.open(session_id, preset=preset, cwd=cwd, options=options)
        factory = self.factory
        if session_id is None:
            log = self.store.create(cwd=session_cwd(cwd, self.cwd), agent_preset=preset)
        else:
            log = await asyncio.to_thread(self.store.open, session_id)
        pending = asyncio.get_running_loop().create_future()
        self._opening[log.id] = pending
        try:
            agent = await factory.create(log, preset=preset, options=options or {})
        except BaseException as exc:
            log.close()
            pending.set_exception(exc)
            pending.exception()   # retrieved: the caller below raises it
            raise
        finally:
            self._opening.pop(log.id, None)
        self.live[agent.id] = agent
        pending.set_result(agent)
        return agent

    async def close(self, agent_id: str) -> None:
        agent = self.live.pop(agent_id, None)
        self._forget(agent_id)
        if agent is not None:
            await self._retire(agent)


def session_cwd(requested, default: str | None) -> str | None:
    """The working directory a new session records: ``requested`` (an absolute path), else ``default``."""
    if requested is None:
        return default
    if not isinstance(requested, str) or not os.path.isabs(requested):
        raise BadSessionCwd(f"a session's cwd must be an absolute path, got {requested!r}")
    return requested


def host_cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:          # the directory was removed under the process: no cwd to record
        return None


def apply(ctx, config):
    host = ctx.get("host")
    home = Path(host.options.home) if host is not None else Path.home() / ".dsh"
    registry = AgentRegistry(ctx, home, config["compression"], host_cwd())
    ctx.provide("agents", registry)
    ctx.effect(lambda: registry.drop_all, "agents.live()")
    registry.keep_idle, registry.idle_release_s = config["keepIdle"], config["idleReleaseMs"] / 1000
    registry.store    # made now: the session store's modules (~8 ms of imports) are not on the first turn
