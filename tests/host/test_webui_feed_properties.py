"""Properties of a page's queue in the shared chat feed (dshctl/host/web/feed.py): whatever order the
live stream, the replay and a re-attach deliver events in — repeats, gaps, late replays — a page gets
every seq after the one it asked for exactly once, in order."""
from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.host.web.feed import Page, SessionFeed, encode, events_after, messages


def log_of(n: int) -> list[dict]:
    return [{"type": "assistant/chunk", "seq": i, "time": i, "data": {}} for i in range(n)]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 60), after=st.integers(-1, 10), deliveries=st.lists(st.integers(0, 59), max_size=80))
def test_a_page_gets_each_seq_after_its_own_once_in_order(n, after, deliveries):
    log = log_of(n)
    page = Page(after)
    for seq in deliveries:                       # any mix of repeats, gaps and stale replays
        if seq < n:
            page.event(seq, encode(log[seq]), log)
    got = [item[1] for item in page.items]
    top = max([s for s in deliveries if s < n] + [after])
    assert got == list(range(after + 1, top + 1))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 40), cut=st.integers(0, 40), after=st.integers(-1, 40))
def test_events_after_is_the_seq_filter(n, cut, after):
    log = log_of(n)
    assert events_after(log, after) == [e for e in log if e["seq"] > after]
    assert events_after(log, after, cut) == [e for e in log if after < e["seq"] < cut]
    shifted = log[1:]                            # a log whose seq is not its index (checked, not assumed)
    assert events_after(shifted, after) == [e for e in shifted if e["seq"] > after]


class FakeAgent:
    def __init__(self, agent_id, events):
        self.id, self.observers = agent_id, []
        self.session = type("S", (), {"events": events})()
        self.ask_user = None

    def append(self, n):
        for _ in range(n):
            event = {"type": "assistant/chunk", "seq": len(self.session.events), "time": 0, "data": {}}
            self.session.events.append(event)
            for observer in list(self.observers):
                observer(event)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["append", "subscribe", "restore"]), st.integers(0, 5)),
                      max_size=30))
def test_pages_subscribed_at_any_moment_across_restores_see_the_whole_log(steps):
    async def run():
        agent = FakeAgent("s", [])
        feed = SessionFeed("s", agent.session.events)
        feed.attach(agent)
        pages = [(-1, feed.subscribe(-1))]
        for action, k in steps:
            if action == "append":
                agent.append(k)
            elif action == "subscribe":
                after = min(k, len(agent.session.events)) - 1
                pages.append((after, feed.subscribe(after)))
            else:                                # retired, restored from the log: a new instance
                agent = FakeAgent("s", list(agent.session.events))
                agent.append(k)                  # appended before the feed notices the new agent
                feed.attach(agent)
        for after, page in pages:
            got = [item[1] for item in page.items]
            assert got == list(range(after + 1, len(agent.session.events)))
            ids = [int(m.id) for m in messages(page.items)]
            assert ids == sorted(set(ids)) and (not got or ids[-1] == got[-1])   # SSE id: the last seq
        feed.close()
    asyncio.run(run())
