"""One live agent: a session log, an inbox, a tool scope, and a driver task that runs its turns.

The public face is dsh's ``Agent``: ``followup()`` queues input for the next turn and wakes the driver,
``steer()`` queues it for the next step (before any queued follow-up) and wakes, ``inject()`` queues
context for the next step without waking, ``abort()`` cancels the running turn (``turn/end`` reason
``aborted`` with the cause), ``when_idle()`` waits until no turn runs. Tool implementations reach their
agent as ``run.agent`` and read ``agent.ctx``, ``agent.session`` and ``agent.abort_event``.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from dshctl.agents.abort import AbortSignal

from .history_view import HistoryView
from .inbox import NEXT_STEP, NEXT_TURN, Inbox, user_message

USER_ABORT = {"kind": "user"}


class Agent:
    def __init__(self, loop, agent_id: str, session, options: dict, tool_scope: str):
        self.loop = loop                  # the factory that made it (its ctx, its llm)
        self.ctx = loop.ctx
        self.id = agent_id
        self.session = session
        self.options = options            # provider?, model?, maxTokens?, system?, preset?
        self.tool_scope = tool_scope
        self.inbox = Inbox()
        self.abort_event = AbortSignal()
        self.abort_cause: dict | None = None
        self.call_counts: dict[str, int] = {}   # the repeat guard's tally, reset each turn
        self.repeat_limit = int(options.get("repeatLimit", 3))
        # the newest turn/start is the highest: a log opened for writing numbers its turns 1, 2, …
        # (the nested trace enforces it), and a long one ends near it
        self.last_turn = next((e["data"]["turn"] for e in reversed(session.events) if e["type"] == "turn/start"),
                              0)
        self.history = HistoryView.seeded(session.events, session.surface())   # then folded as it grows
        self.request_header_logged = False  # this instance's first request logs its header (dsh)
        self._driver: asyncio.Task | None = None
        self.disposed = False

    # ---- state ---------------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return "running" if self._driver is not None and not self._driver.done() else "idle"

    def tool_view(self) -> dict:
        tools = self.ctx.get("tools")
        if tools is None:
            return {}
        try:
            view = tools.view(self.tool_scope)
        except Exception:  # noqa: BLE001 - a scope that went away (preset unloaded) sees the global layer
            view = tools.view()
        return {name: d for name, d in view.items() if getattr(d, "visible_to", None) is None or d.visible_to(self)}

    def restricted(self, name: str) -> bool:
        """Registered somewhere, yet not visible here: a preset or session rule hides it."""
        tools = self.ctx.get("tools")
        return tools is not None and any(name in s.own for s in tools.scopes.values())

    @property
    def observers(self) -> list[Callable[[dict], Any]]:
        """Called with every event appended to this agent's log, whoever appends it (loop, scheduler,
        Code Mode): the CLI's stream reads the turn here."""
        return self.session.listeners

    def append(self, kind: str, data: Any, **extra: Any) -> dict:
        return self.session.append(kind, data, **extra)

    # ---- input ---------------------------------------------------------------------------------
    def followup(self, content) -> dict:
        return self._send(NEXT_TURN, content, wake=True)

    def steer(self, content) -> dict:
        return self._send(NEXT_STEP, content, wake=True)

    def inject(self, content, source: dict | None = None) -> dict:
        return self._send(NEXT_STEP, content, wake=False, source=source)

    def _send(self, target: str, content, *, wake: bool, source: dict | None = None) -> dict:
        if self.disposed:
            raise RuntimeError(f'agent "{self.id}" is disposed')
        message = user_message(content, source)
        if wake and self.status == "running" and self.abort_event.is_set():
            target = NEXT_TURN   # waking after an abort: the input opens the next turn
        self.inbox.put(target, message)
        if wake:
            self._wake()
        return message

    def abort(self, cause: dict | None = None, *, keep_inbox: bool = False) -> None:
        if not keep_inbox:
            self.inbox.clear()
        if self.status == "running" and not self.abort_event.is_set():
            self.abort_cause = cause or USER_ABORT
            self.abort_event.set()

    async def when_idle(self) -> None:
        while self._driver is not None and not self._driver.done():
            await asyncio.shield(self._driver)

    whenIdle = when_idle   # dsh's spelling, for plugins ported from TypeScript

    # ---- driver --------------------------------------------------------------------------------
    def _wake(self) -> None:
        if self.status == "running":
            return   # the running driver claims the new input at its next boundary
        self._driver = asyncio.ensure_future(self._drive())

    async def _drive(self) -> None:
        from .turn import run_turn
        self.ctx.emit("agent/status", {"agent": self, "status": "running"})
        try:
            while self.inbox.pending and not self.disposed:
                self.abort_event = AbortSignal()
                self.abort_cause = None
                self.call_counts = {}
                await run_turn(self)
        finally:
            self.ctx.emit("agent/status", {"agent": self, "status": "idle"})

    async def dispose(self) -> None:
        """Stop (a running turn ends ``aborted`` with cause ``disposed``), then wait for quiet."""
        self.abort({"kind": "disposed"})
        self.disposed = True
        await self.when_idle()
