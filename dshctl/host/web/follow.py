"""``GET /api/chat/events``: the pages that follow sessions, one :class:`~.feed.SessionFeed` per session.

A session with a live agent is followed through that agent (the page opening it restores a root
session's agent, as before); a sub-agent's session that is not live is followed from the store,
read-only (a page looking at a settled child must not bring it back), and joined live when its agent
comes back (``agent/status``). The feed's pages also get the session's sub-agents as rows
(``{"type": "subagent", "child": {...}}``, children.py): the stored ones when the page opens, then
each ``subagent/start`` / ``subagent/end`` and each child's running/idle.
"""
from __future__ import annotations

import asyncio

from .children import live_row, stored_rows
from .feed import SessionFeed, messages


class Feeds:
    def __init__(self, ctx):
        self.ctx = ctx
        self.feeds: dict[str, SessionFeed] = {}
        self.calls: dict[str, str] = {}         # child id -> the tool call that started it (live)

    def install(self) -> None:
        self.ctx.on("agent/status", self.on_status)
        self.ctx.on("subagent/start", lambda info: self.on_subagent(info, ended=False))
        self.ctx.on("subagent/end", lambda info: self.on_subagent(info, ended=True))
        self.ctx.effect(lambda: self.close, "web app chat feeds")

    def close(self) -> None:
        for feed in self.feeds.values():
            feed.close()
        self.feeds.clear()

    # ---- live signals ----------------------------------------------------------------------------
    def attach(self, agent) -> None:
        """``agent`` may be a new instance for its session (restored after a release): follow it."""
        feed = self.feeds.get(agent.id)
        if feed is not None:
            feed.attach(agent)

    def on_status(self, info: dict) -> None:
        agent = info.get("agent")
        if agent is None:
            return
        self.attach(agent)
        parent = self.feeds.get((agent.options or {}).get("parent"))
        if parent is not None:
            self._child(parent, {**live_row(agent), "state": info.get("status") or agent.status})

    def on_subagent(self, info: dict, *, ended: bool) -> None:
        if info.get("toolCallId") and info.get("id"):
            self.calls[info["id"]] = info["toolCallId"]    # for pages that open while it runs
        feed = self.feeds.get(info.get("parent"))
        if feed is None:
            return
        agents = self.ctx.get("agents")
        child = agents.live.get(info.get("id")) if agents is not None else None
        row = live_row(child) if child is not None else {"id": info.get("id")}
        if info.get("toolCallId"):
            row["callId"] = info["toolCallId"]
        if ended:
            row.update(state="settled", stopReason=info.get("stopReason"))
        else:
            row["state"] = "running"
        self._child(feed, row)

    @staticmethod
    def _child(feed: SessionFeed, row: dict) -> None:
        for page in feed.pages:
            page.put_nowait({"type": "subagent", "child": row})

    # ---- a page ----------------------------------------------------------------------------------
    async def stream(self, session_id: str, agent, stored: list[dict] | None, after: int, first: dict):
        feed = self.feeds.get(session_id)
        if feed is None:
            feed = self.feeds[session_id] = SessionFeed(session_id, stored if agent is None else agent.session.events)
        elif feed.agent is None and stored is not None and len(stored) > len(feed.log):
            feed.log = stored                       # a fresher read of a session nobody runs
        feed.attach(agent)
        page = feed.subscribe(after)
        try:
            yield first
            for row in await self._stored_children(session_id, feed.log):
                yield {"type": "subagent", "child": row}   # the live rows queued meanwhile come after
            while True:
                for message in messages(await page.take()):
                    yield message
        finally:
            feed.unsubscribe(page)
            if not feed.pages and self.feeds.get(session_id) is feed:
                self.feeds.pop(session_id).close()

    async def _stored_children(self, session_id: str, events: list[dict]) -> list[dict]:
        agents = self.ctx.get("agents")
        if agents is None:
            return []
        snapshot = list(events)
        try:
            rows = await asyncio.to_thread(stored_rows, agents.store, dict(agents.live), session_id, snapshot)
        except Exception:  # noqa: BLE001 - no rows rather than no conversation
            return []
        # a child that went live while the store was read: its log on disk has an open turn, yet
        # it is running, not cut
        rows = [{**r, **live_row(agents.live[r["id"]])} if r["id"] in agents.live else r for r in rows]
        return [r if r.get("callId") or r["id"] not in self.calls else {**r, "callId": self.calls[r["id"]]}
                for r in rows]
