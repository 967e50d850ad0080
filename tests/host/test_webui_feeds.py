"""The web app's feeds compute once per change and send every client the same bytes (issue 26's
performance target: 100 SSE clients must not multiply the host's work)."""
from __future__ import annotations

import asyncio
import json

from dshctl.host.web.hub import Hub


async def _take(stream, n):
    out = []
    async for item in stream:
        out.append(item)
        if len(out) == n:
            return out


def test_status_feed_computes_once_per_change_not_per_client_or_poll():
    async def scenario():
        state = {"n": 0}
        hub = Hub(lambda: dict(state), settle=0.01, refresh=30.0)
        clients = [asyncio.ensure_future(_take(hub.stream(), 2)) for _ in range(100)]
        await asyncio.sleep(0.3)                 # no change: no recomputation, whatever the clients
        assert hub.computed == 1
        state["n"] = 1
        hub.poke()
        hub.poke()                               # a burst of changes is one computation
        got = await asyncio.wait_for(asyncio.gather(*clients), 2)
        assert hub.computed == 2
        assert [json.loads(b) for b in got[0]] == [{"n": 0}, {"n": 1}]
        assert all(c[1] is got[0][1] for c in got)   # encoded once: the same bytes object to all
        hub.close()
    asyncio.run(scenario())


def test_unchanged_document_is_not_resent_and_probe_counts_as_a_poke():
    async def scenario():
        marks = {"agent": "idle"}
        hub = Hub(lambda: {"agent": marks["agent"], "clock": 1}, settle=0.01, refresh=30.0,
                  probe=lambda: marks["agent"], probe_period=0.02)
        client = asyncio.ensure_future(_take(hub.stream(), 2))
        await asyncio.sleep(0.1)
        hub.poke()                               # a poke that changes nothing sends nothing
        await asyncio.sleep(0.1)
        assert not client.done() and hub.computed == 2
        marks["agent"] = "running"               # no poke: the probe sees it
        got = await asyncio.wait_for(client, 2)
        assert json.loads(got[1])["agent"] == "running"
        hub.close()
    asyncio.run(scenario())
