"""The loop-agent bundle's promise "sub-agents never get a driver", with real sub-agents: a child told
``/forever`` is not armed — the bundle drops the command (so the child sends nothing), no continuation
follows (a root session told the same loops: test_loop_agent.py), and the child settles after one turn."""
from __future__ import annotations

import asyncio
import json

from tests.agents.loop_agent_helpers import loop_agent_home
from tests.agents.subagent_helpers import SUBAGENT_ROWS, call
from tests.host.helpers import InProcess, bundle_dir, run_async, until, write


def with_subagents(home):
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(patch, patch.read_text() + "".join(f"    - {json.dumps(row)}\n" for row in SUBAGENT_ROWS))
    return home


@run_async()
async def test_a_child_told_forever_gets_no_driver_and_settles_after_one_turn(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "loop me", "prompt": "/forever"})]},
               {"when": "started subagent", "text": "ok"},
               {"when": "Background subagent", "text": "noted"}]
    home = with_subagents(loop_agent_home(tmp_path, replies, runner={"continuation": "keep going"}))
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agent = await agents.open()
        agent.followup("delegate")

        def notice():
            return next((e["data"] for e in agent.session.events if e["type"] == "user/message"
                         and e["data"]["source"]["kind"] == "subagent-settled"), None)
        await until(lambda: notice() is not None and agent.status == "idle", what="the settlement notice")
        await asyncio.sleep(0.2)                      # ten supervisor polls
        child = notice()["source"]["senderSessionId"]
        assert [b["text"] for b in notice()["content"]][1] == "It left no closing message."
        events = agents.store.read(child).events
        assert [e["type"] for e in events].count("turn/start") == 1
        assert not any(e["type"] == "user/message" for e in events)    # /forever dropped, nothing sent
        assert "keep going" not in json.dumps(events)
        assert child not in agents.live
