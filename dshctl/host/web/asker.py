"""``ask_user_question`` on the page: while pages follow a session, its questions are put to them and
the first answer wins (``POST /api/chat/answer``)."""
from __future__ import annotations

import asyncio


class Asker:
    def __init__(self, agent):
        self.agent, self.previous = agent, getattr(agent, "ask_user", None)
        self.pages: set = set()             # anything with put_nowait (feed.Page)
        self.pending: asyncio.Future | None = None
        self.question: dict | None = None
        agent.ask_user = self.ask

    def attach(self, page) -> None:
        if page in self.pages:
            return
        self.pages.add(page)
        if self.pending is not None and not self.pending.done():
            page.put_nowait({"type": "ask", "question": self.question})   # asked before this page came

    async def ask(self, question: dict):
        self.question = question
        self.pending = asyncio.get_running_loop().create_future()
        for page in self.pages:
            page.put_nowait({"type": "ask", "question": question})
        try:
            return await self.pending
        finally:
            self.pending = None
            for page in self.pages:
                page.put_nowait({"type": "asked"})

    def answer(self, answer) -> bool:
        if self.pending is None or self.pending.done():
            return False
        self.pending.set_result(answer)
        return True

    def release(self) -> None:
        if self.agent.ask_user == self.ask:
            self.agent.ask_user = self.previous


ASKERS: dict[str, Asker] = {}     # agent id -> its pages' asker, while at least one page follows


def asker_for(agent) -> Asker:
    asker = ASKERS.get(agent.id)
    if asker is None or asker.agent is not agent:
        asker = ASKERS[agent.id] = Asker(agent)
    return asker


def release_asker(agent, pages) -> None:
    """``pages`` no longer follow ``agent``: with no page left its questions go back to the default."""
    asker = ASKERS.get(agent.id)
    if asker is None or asker.agent is not agent:
        return
    asker.pages.difference_update(pages)
    if not asker.pages:
        ASKERS.pop(agent.id).release()
