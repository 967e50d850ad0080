"""The shared chat feed (dshctl/host/web/feed.py) on a real in-process host and real HTTP: two pages on
one session both get every event of every turn, a page opening mid-turn catches up from the log and
then streams, a reconnect with ``Last-Event-ID`` resumes after it, and a session whose agent is
retired and restored keeps its pages. Repeated 30 times, with the late page arriving at a different
moment of the turn each time, to show no event is lost (the shared feed taken back earlier lost a
turn's end about one run in eight)."""
from __future__ import annotations

import asyncio
import json
import random

import httpx

from tests.agents.loop_rows import agent_rows
from tests.agents.subagent_helpers import SUBAGENT_ROWS, call
from tests.host.helpers import InProcess, make_home, run_async, until

WEB_ROWS = [{"id": "http", "name": "@dshctl/http", "config": {"host": "127.0.0.1", "port": 0}},
            {"id": "status-page", "name": "@dshctl/status-page"}]


def web_home(tmp_path, replies, extra=()):
    rows = agent_rows(replies) + "".join(f"    - {json.dumps(r)}\n" for r in (*WEB_ROWS, *extra))
    return make_home(tmp_path, rows)


class Follower:
    """One page's SSE stream of a session: the seqs it got, in order, and the other messages."""

    def __init__(self, http: httpx.AsyncClient, session: str, after: int = -1, last_event_id: str | None = None):
        self.seqs: list[int] = []
        self.types: list[str] = []
        self.items: list[dict] = []
        self.last_id: str | None = None
        headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
        self.task = asyncio.ensure_future(self._read(http, session, after, headers))

    async def _read(self, http, session, after, headers):
        async with http.stream("GET", "/api/chat/events", params={"session": session, "after": after},
                               headers=headers) as feed:
            async for line in feed.aiter_lines():
                if line.startswith("id: "):
                    self.last_id = line[4:]
                elif line.startswith("data: "):
                    item = json.loads(line[6:])
                    events = item["events"] if item["type"] == "events" else [item["event"]] if item["type"] == "event" else []
                    if not events:
                        self.items.append(item)
                    for event in events:
                        self.seqs.append(event["seq"])
                        self.types.append(event["type"])

    def ends(self) -> int:
        return self.types.count("turn/end")

    async def close(self):
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def contiguous(seqs: list[int], first: int) -> bool:
    return seqs == list(range(first, first + len(seqs)))


async def send(http, session, text):
    answer = await http.post("/api/chat/send", json={"session": session, "text": text})
    assert answer.status_code == 200, answer.text
    return answer.json()["session"]


def client(root) -> httpx.AsyncClient:
    server = root.get("http")
    return httpx.AsyncClient(base_url=server.url.rstrip("/"), timeout=30, headers={"X-Dshctl-Token": server.token})


@run_async(timeout=240)
async def test_two_pages_see_every_turn_and_a_late_page_catches_up_30_times(tmp_path):
    runs = 30
    replies = [{"text": f"reply {i} " + "word " * 30, "delayMs": 40} for i in range(runs + 1)]
    async with InProcess(web_home(tmp_path, replies)) as host:
        agents = host.root.get("agents")
        async with client(host.root) as http:
            session = await send(http, None, "warm up")
            await until(lambda: agents.get(session) is not None and agents.get(session).status == "idle"
                        and len(agents.get(session).session.events) > 5, what="the first turn")
            rng = random.Random(26)
            for run in range(runs):
                agent = agents.get(session)
                before = len(agent.session.events) - 1
                early = Follower(http, session, after=before)       # the page open all along
                await asyncio.sleep(0.01)
                await send(http, session, f"turn {run}")
                await asyncio.sleep(rng.uniform(0.0, 0.05))         # the second tab opens mid-turn
                late = Follower(http, session)                      # ... from nothing: the whole log
                await until(lambda: early.ends() and late.ends() == run + 2, what=f"run {run}: both pages' turn end")
                await until(lambda: agent.status == "idle", what="the turn to finish")
                await asyncio.sleep(0.02)
                logged = [e["seq"] for e in agent.session.events]
                assert contiguous(early.seqs, before + 1) and early.seqs == logged[before + 1:], run
                assert late.seqs == logged, run                     # no gap, no repeat, nothing missing
                assert early.types[-1] == late.types[-1] == "turn/end"
                await early.close()
                await late.close()


@run_async()
async def test_a_reconnect_with_last_event_id_resumes_after_it(tmp_path):
    replies = [{"text": "first " * 20}, {"text": "second " * 20, "delayMs": 200}]
    async with InProcess(web_home(tmp_path, replies)) as host:
        agents = host.root.get("agents")
        async with client(host.root) as http:
            session = await send(http, None, "one")
            await until(lambda: agents.get(session) and agents.get(session).status == "idle" and
                        any(e["type"] == "turn/end" for e in agents.get(session).session.events), what="turn 1")
            page = Follower(http, session)
            await until(lambda: page.ends() == 1, what="the replay")
            assert page.last_id == str(page.seqs[-1])                # the SSE id is the last seq
            await send(http, session, "two")
            await until(lambda: len(page.seqs) > page.seqs.index(page.seqs[-1]) and "assistant/chunk" in
                        page.types[page.types.index("turn/end") + 1:], what="the second turn streaming")
            await page.close()                                       # the connection drops mid-turn
            again = Follower(http, session, after=-1, last_event_id=page.last_id)
            await until(lambda: again.ends() == 1, what="the rest of turn 2")
            assert again.seqs[0] == int(page.last_id) + 1            # the header wins over ?after
            assert page.seqs + again.seqs == [e["seq"] for e in agents.get(session).session.events]
            await again.close()


@run_async()
async def test_a_page_keeps_following_when_the_agent_is_retired_and_restored(tmp_path):
    replies = [{"text": "before"}, {"text": "after the restore"}]
    async with InProcess(web_home(tmp_path, replies)) as host:
        agents = host.root.get("agents")
        async with client(host.root) as http:
            session = await send(http, None, "one")
            await until(lambda: agents.get(session) and agents.get(session).status == "idle"
                        and any(e["type"] == "turn/end" for e in agents.get(session).session.events), what="turn 1")
            page = Follower(http, session)
            await until(lambda: page.ends() == 1, what="the replay")
            await agents.close(session)                              # released (idle release, a reload)
            assert agents.get(session) is None
            await send(http, session, "two")                         # restored from its log
            await until(lambda: page.ends() == 2, what="the restored agent's turn on the same page")
            restored = agents.get(session)
            await until(lambda: restored.status == "idle", what="turn 2 to finish")
            assert page.seqs == [e["seq"] for e in restored.session.events]
            await page.close()


DELEGATE = call("subagent_fork", {"description": "count the files", "prompt": "count them"}, "call-fork-1")


@run_async()
async def test_a_delegating_turn_shows_its_child_at_the_tool_call_and_its_transcript(tmp_path):
    replies = [{"toolCalls": [DELEGATE]}, {"when": "count them", "text": "there are 3 files", "delayMs": 100},
               {"text": "the child says 3"}]
    async with InProcess(web_home(tmp_path, replies, SUBAGENT_ROWS)) as host:
        agents = host.root.get("agents")
        async with client(host.root) as http:
            session = await send(http, None, "delegate it")
            page = Follower(http, session)
            await until(lambda: page.ends() == 1, what="the parent's turn")
            rows = [i["child"] for i in page.items if i["type"] == "subagent"]
            child = rows[0]["id"]
            assert {r["callId"] for r in rows if "callId" in r} == {"call-fork-1"}
            assert rows[0]["state"] == "running" and rows[-1]["state"] == "settled"
            assert rows[-1]["stopReason"] == "completed"
            assert any(r.get("label") == "count the files" for r in rows)
            assert child not in agents.live                          # the one-shot child is gone

            later = Follower(http, session)                          # a page opened afterwards
            transcript = Follower(http, child)                       # the child, read from the store
            await until(lambda: later.ends() == 1 and transcript.ends() == 1, what="the replays")
            [stored] = [i["child"] for i in later.items if i["type"] == "subagent"]
            assert stored["callId"] == "call-fork-1" and stored["label"] == "count the files"
            assert stored["state"] == "settled" and stored["stopReason"] == "completed"
            assert stored["model"] == "scripted"
            assert "assistant/message" in transcript.types and child not in agents.live   # not revived
            for follower in (page, later, transcript):
                await follower.close()


BACKGROUND = call("subagent", {"description": "look around", "prompt": "PROMPT-LOOK"}, "call-bg-1")


@run_async()
async def test_a_background_child_is_linked_to_its_call_live_and_from_the_store(tmp_path):
    replies = [{"toolCalls": [BACKGROUND]}, {"when": "started subagent", "text": "started it"},
               {"when": "PROMPT-LOOK", "text": "looked around", "delayMs": 100},
               {"when": "Background subagent", "text": "noted the child"}]
    async with InProcess(web_home(tmp_path, replies, SUBAGENT_ROWS)) as host:
        agents = host.root.get("agents")
        async with client(host.root) as http:
            session = await send(http, None, "delegate in the background")
            page = Follower(http, session)
            await until(lambda: any(i["type"] == "subagent" and i["child"].get("state") == "settled"
                                    for i in page.items), what="the child to settle")
            rows = [i["child"] for i in page.items if i["type"] == "subagent"]
            merged = {}
            for row in rows:                                         # as the page merges them, by id
                merged.setdefault(row["id"], {}).update(row)
            [child] = merged.values()
            assert child["callId"] == "call-bg-1" and child["label"] == "look around"
            assert "running" in [r["state"] for r in rows] and child["state"] == "settled"
            await until(lambda: agents.get(session).status == "idle" and page.ends() >= 2, what="the notice's turn")
            later = Follower(http, session)
            await until(lambda: later.ends() >= 2, what="the replay")
            [stored] = [i["child"] for i in later.items if i["type"] == "subagent"]
            assert stored["callId"] == "call-bg-1"                   # from "started subagent <id>"
            assert stored["mode"] == "continuable" and stored["stopReason"] == "completed"
            await page.close()
            await later.close()
