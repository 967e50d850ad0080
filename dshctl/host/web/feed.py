"""A session's chat feed, shared by every page that follows it: the session log is the feed.

Every event of a log carries its ``seq``. A page asks for the events after the last one it has
(``?after=N``, or the ``Last-Event-ID`` its browser sends when it reconnects). The feed subscribes the
page first, then replays from the log what comes after N, and from then on the page gets each event
as the log appends it. A page's stream is contiguous by construction: an event whose seq is not the
page's next one is a duplicate (dropped) or comes after a gap, and a gap is filled from the log before
it (the log holds every seq). So nothing can fall between the replay and the live stream, and nothing
is lost when the session's agent is retired and restored: the feed attaches to the new agent (on its
``agent/status``, or when a message is sent) and catches its pages up from the new log.

One observer per session however many pages follow it: each event is encoded once and the same bytes
go to every page. Events that pile up while a page's previous message is being written leave as one
``{"type": "events"}`` message; every event message carries the SSE ``id:`` of its last seq.
"""
from __future__ import annotations

import asyncio
import json

from .asker import asker_for, release_asker
from .messages import Tagged


def encode(event: dict) -> bytes:
    return json.dumps(event, default=str).encode()


def events_after(events: list[dict], after: int, before: int | None = None) -> list[dict]:
    """The events with ``after < seq < before``; ``seq`` is the index in a log, checked, not assumed."""
    start = after + 1
    end = len(events) if before is None else min(before, len(events))
    if 0 <= start <= len(events) and (start == len(events) or events[start]["seq"] == start) \
            and (end == 0 or events[end - 1]["seq"] == end - 1):
        return events[start:end]
    return [e for e in events if e["seq"] > after and (before is None or e["seq"] < before)]


class Page:
    """One page's queue: events in seq order without gaps or repeats, and the feed's other items."""

    def __init__(self, after: int):
        self.last = after                   # the seq of the last event queued for this page
        self.items: list[tuple] = []        # ("event", seq, bytes) | ("item", value)
        self.ready = asyncio.Event()
        self.children_seen: set[str] = set()   # sub-agents a live item already described

    def event(self, seq: int, data: bytes, log: list[dict]) -> None:
        if seq <= self.last:
            return                          # already queued (the replay and the live stream met)
        if seq > self.last + 1:             # a gap: the log has what is missing
            for missing in events_after(log, self.last, seq):
                self._push(missing["seq"], encode(missing))
        self._push(seq, data)

    def _push(self, seq: int, data: bytes) -> None:
        self.items.append(("event", seq, data))
        self.last = seq
        self.ready.set()

    def put_nowait(self, value) -> None:
        """Anything else for the page (a question to answer, a sub-agent's row): in order."""
        self.items.append(("item", value))
        self.ready.set()

    async def take(self) -> list[tuple]:
        await self.ready.wait()
        self.ready.clear()
        items, self.items = self.items, []
        return items


class SessionFeed:
    def __init__(self, session_id: str, events: list[dict]):
        self.id = session_id
        self.agent = None
        self.log = events                   # the live agent's log, or the stored one until there is one
        self.pages: set[Page] = set()

    def attach(self, agent) -> None:
        if agent is None or agent is self.agent:
            return
        self.detach()
        self.agent, self.log = agent, agent.session.events
        agent.observers.append(self.observe)
        asker = asker_for(agent)
        for page in self.pages:
            asker.attach(page)
            self.catch_up(page)

    def detach(self) -> None:
        if self.agent is not None and self.observe in self.agent.observers:
            self.agent.observers.remove(self.observe)
        if self.agent is not None:
            release_asker(self.agent, self.pages)

    def observe(self, event: dict) -> None:
        data = encode(event)
        for page in self.pages:
            page.event(event["seq"], data, self.log)

    def subscribe(self, after: int) -> Page:
        page = Page(after)
        self.pages.add(page)                # subscribed first, then the log so far: no window between
        if self.agent is not None:
            asker_for(self.agent).attach(page)
        self.catch_up(page)
        return page

    def catch_up(self, page: Page) -> None:
        for event in events_after(self.log, page.last):
            page.event(event["seq"], encode(event), self.log)

    def unsubscribe(self, page: Page) -> None:
        self.pages.discard(page)
        if self.agent is not None:
            release_asker(self.agent, {page})

    def close(self) -> None:
        self.detach()
        self.pages.clear()


def messages(items: list[tuple]):
    """A page's queued items as SSE messages: a run of events is one message, tagged with its last seq."""
    run: list[tuple] = []
    for item in items:
        if item[0] == "event":
            run.append(item)
            continue
        if run:
            yield _batch(run)
            run = []
        yield item[1]
    if run:
        yield _batch(run)


def _batch(run: list[tuple]) -> Tagged:
    if len(run) == 1:
        return Tagged(b'{"type": "event", "event": ' + run[0][2] + b"}", str(run[0][1]))
    return Tagged(b'{"type": "events", "events": [' + b", ".join(r[2] for r in run) + b"]}", str(run[-1][1]))
