"""Children's logs are real sessions: dsh's own store lists every child dshctl wrote (background
continuable children, a continued one, a foreground fork) with its lineage header, and reads each as
dshctl reads it (history, knobs, inbox, request header), loading it without complaint."""
from __future__ import annotations

import asyncio

from dshctl.agents.session.store import SessionStore
from tests.agents.subagent_helpers import call, subagent_home
from tests.dsh.test_sessions_vs_dsh import dsh_reads, dshctl_reads, same_reading
from tests.host.helpers import InProcess, until

REPLIES = [{"text": "hello"},
           {"when": "delegate", "toolCalls": [call("subagent", {"description": f"job {t}", "prompt": t})
                                              for t in ("alpha", "beta")]},
           {"when": "started subagent", "text": "waiting"},
           {"when": "alpha", "text": "alpha done"}, {"when": "beta", "text": "beta done"},
           {"when": "more-work", "text": "more done"},
           {"when": "fork-it", "toolCalls": [call("subagent_fork", {"description": "fk", "prompt": "fork-q"})]},
           {"when": "fork-q", "text": "fork answer"}]


def notices(agent):
    return [e for e in agent.session.events if e["type"] == "user/message"
            and e["data"]["source"]["kind"] == "subagent-settled"]


async def family(home) -> tuple[str, list[str]]:
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agent = await agents.open()
        agent.followup("hi")
        await agent.when_idle()
        agent.followup("delegate")
        await until(lambda: len(notices(agent)) == 2 and agent.status == "idle", what="two notices")
        child = notices(agent)[0]["data"]["source"]["senderSessionId"]
        await host.root.get("subagents").followup(agent, child, "more-work")
        await until(lambda: len(notices(agent)) == 3 and agent.status == "idle", what="third notice")
        agent.followup("fork-it")
        await agent.when_idle()
        kids = [i.id for i in agents.store.list() if i.header.get("parentSession") == agent.id]
        return agent.id, kids


def test_dsh_reads_every_child_session_dshctl_wrote(real_dsh, tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    parent, kids = asyncio.run(asyncio.wait_for(family(home), 60))
    assert len(kids) == 3
    store = SessionStore(home)
    report = dsh_reads(real_dsh, store.root)
    listed = {h["id"]: h for h in report["listed"]}
    assert set(kids) | {parent} <= set(listed)
    for kid in kids:
        assert listed[kid]["parentSession"] == parent and listed[kid]["origin"] == "subagent"
        assert listed[kid]["delegationDepth"] == 1
        assert listed[kid] == store.read(kid).header
    for session_id in [parent, *kids]:
        same_reading(report["sessions"][session_id], dshctl_reads(store, session_id))
