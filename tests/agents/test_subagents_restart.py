"""kill -9 of the host mid-delegation, then a restart: the cut children are closed as dsh closes a
crash-cut turn (``interrupted``), a continuable child's parent is told it was stopped and answers, and
nothing written before the kill is lost."""
from __future__ import annotations

import json
import signal
import subprocess
import time

from dshctl.agents.session.store import SessionStore
from tests.agents.subagent_helpers import call, subagent_home
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess

REPLIES = [{"when": "delegate", "toolCalls": [
               call("subagent", {"description": "bg", "prompt": "slow-bg"}),
               call("subagent_fork", {"description": "fg", "prompt": "slow-fg"})]},
           {"when": "slow-bg", "text": "bg " * 200, "delayMs": 30000},
           {"when": "slow-fg", "text": "fg " * 200, "delayMs": 30000},
           {"when": "was stopped before it finished", "text": "the background child was cut; noted"}]


def children(store, parent):
    return {i.id: i for i in store.list() if i.header.get("parentSession") == parent}


def streaming(store, session_id) -> bool:
    return any(e["type"] == "step/start" for e in store.read(session_id).events)


def test_kill_9_mid_delegation_then_restart(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    store = SessionStore(home)
    host = HostProcess(home)
    with host:
        client = subprocess.Popen([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format",
                                   "json", "delegate"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        parent = None
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            parent = parent or next((i.id for i in store.list() if "origin" not in i.header), None)
            kids = children(store, parent) if parent else {}
            if len(kids) == 2 and all(streaming(store, k) for k in kids):
                break
            time.sleep(0.05)
        assert len(kids) == 2
        host.proc.send_signal(signal.SIGKILL)
        host.proc.wait(WAIT_S)
        client.wait(WAIT_S)
    cut = {k: store.read(k) for k in kids}
    assert all(seen.closers for seen in cut.values())        # both were mid-turn when the host died
    durable = {k: len(seen.events) for k, seen in cut.items()}
    with HostProcess(home):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            texts = [b.get("text") for e in store.read(parent).events if e["type"] == "assistant/message"
                     for b in e["data"]["message"]["content"]]
            if "the background child was cut; noted" in texts:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the parent never answered the notice")
    for kid, seen in ((k, store.read(k)) for k in kids):
        assert not seen.closers
        ends = [e["data"]["reason"]["kind"] for e in seen.events if e["type"] == "turn/end"]
        assert ends == ["interrupted"], kid
        assert seen.events[:durable[kid]] == cut[kid].events      # what was durable before the kill stays
    by_mode = {json.dumps(next(e["data"]["mode"] for e in store.read(k).events
                               if e["type"] == "subagent/descriptor")): k for k in kids}
    background = by_mode['"continuable"']
    notices = [e["data"] for e in store.read(parent).events if e["type"] == "user/message"
               and e["data"]["source"]["kind"] == "subagent-settled"]
    assert [n["source"]["senderSessionId"] for n in notices] == [background]
    assert notices[0]["content"][0]["text"] == f"Background subagent {background} was stopped before it finished."
