"""kill -9 of a host while a Team is being built, then a restart. The Lead had spawned ``alpha`` (its first
turn still streaming), sent it a ``followup_task`` that alpha had not yet taken, and was provisioning
``beta`` on a provider that never got to create beta's session. After the restart, the Lead's first Team
activity reconciles beta as failed and redelivers the undelivered message to alpha, which takes it once.
Nothing written before the kill is lost."""
from __future__ import annotations

import signal
import subprocess
import time

from dshctl.agents.session.store import SessionStore
from dshctl.agents.teams.fold import fold_team
from tests.agents.subagent_helpers import call
from tests.agents.team_helpers import team_home
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, bundle_dir, write

# A provider whose continuable preparation never finishes: a teammate on it stays provisioning.
STUCK_PROVIDER = '''
import asyncio
from dshctl.agents.subagents.providers import InProcessProvider

name = "stuck-provider"
inject = ["subagents"]

class Stuck(InProcessProvider):
    async def prepare_continuable(self, request):
        await asyncio.sleep(3600)

def apply(ctx, config):
    ctx.subagents.register_provider(Stuck("stuck", fork=True))
    ctx.effect(lambda: (lambda: ctx.subagents.remove_provider("stuck")), "stuck provider")
'''

REPLIES = [
    {"when": "assemble", "toolCalls": [
        call("spawn_teammate", {"name": "alpha", "description": "writer", "prompt": "alpha: begin"}),
        call("followup_task", {"target": "alpha", "message": "extra work"}),
        call("spawn_teammate", {"name": "beta", "description": "forked helper", "prompt": "beta: begin",
                                "context": "fork"})]},
    {"when": "alpha: begin", "text": "alpha " * 200, "delayMs": 30000},
    {"when": "extra work", "text": "extra done"},
    {"when": "was stopped before it finished", "text": "noted the cut"},
    *({"text": "noted"} for _ in range(4)),
]


def lead_events(store, lead):
    return store.read(lead).events if lead else []


def test_kill_9_while_building_a_team_then_restart(tmp_path):
    home = team_home(tmp_path, REPLIES, tools_config={"forkProvider": "stuck"},
                     extra_rows=[{"id": "stuck", "name": "./plugins/stuck_provider.py"}])
    write(bundle_dir(home) / "plugins" / "stuck_provider.py", STUCK_PROVIDER.lstrip())
    store = SessionStore(home)
    with HostProcess(home) as host:
        client = subprocess.Popen([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "assemble"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lead, deadline = None, time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            lead = lead or next((i.id for i in store.list() if "origin" not in i.header), None)
            state = fold_team(lead, lead_events(store, lead)) if lead else None
            if state and len(state.members) == 2 and len(state.messages) == 1:
                break
            time.sleep(0.05)
        assert [(m["name"], m["phase"]) for m in state.members.values()] == [("alpha", "active"),
                                                                              ("beta", "provisioning")]
        assert state.delivered == set()          # alpha is still streaming its first turn
        host.proc.send_signal(signal.SIGKILL)
        host.proc.wait(WAIT_S)
        client.wait(WAIT_S)
    before = lead_events(store, lead)
    alpha, beta = list(state.members)
    with HostProcess(home):
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            after = fold_team(lead, lead_events(store, lead))
            if after.members[beta]["phase"] != "provisioning" and after.delivered:
                break
            time.sleep(0.05)
    assert after.members[beta]["phase"] == "failed"
    assert after.members[beta]["error"].startswith("child Session recovery failed")
    assert after.members[alpha]["phase"] == "active"
    assert after.delivered == set(after.messages)
    assert store.read(lead).events[:len(before)] == before          # durable before the kill: kept
    mail = [e["data"] for e in store.read(alpha).events if e["type"] == "user/message"
            and e["data"]["source"]["kind"] == "team-message"]
    assert [m["content"][1]["text"] for m in mail] == ["extra work"]     # taken once
    ends = [e["data"]["reason"]["kind"] for e in store.read(alpha).events if e["type"] == "turn/end"]
    assert ends[0] == "interrupted"
