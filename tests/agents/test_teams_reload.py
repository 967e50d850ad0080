"""Reloading or unloading the ``@dshctl/agent-team`` row stops its teammates cleanly (dsh's
``disposeRuntime`` → ``drainContinuableChildren``), through real reloads of an in-process host driven by
edits of the user layer. A teammate caught mid-turn ends that turn ``aborted`` (cause ``parent``), settles
and leaves the host. Its Lead is told with the usual settlement notice and answers it. No activation,
agent or recovery task is left behind. A config change brings up a new service that reads the Team back
and can wake the teammate again, while the old one refuses work. Disabling the row leaves the same clean state."""
from __future__ import annotations

import json

import pytest

from dshctl.agents.teams.board import TeamError

from dshctl.agents.teams.fold import fold_team
from tests.agents.subagent_helpers import call, notices
from tests.agents.team_helpers import team_home
from tests.host.helpers import InProcess, run_async, until, user_file, write

REPLIES = [
    {"when": "form a team", "toolCalls": [call("spawn_teammate", {"name": "alpha", "description": "slow worker",
                                                                  "prompt": "alpha: long job"})]},
    {"when": "alpha: long job", "text": "never finished", "delayMs": 60_000},
    {"when": '"name":"alpha"', "text": "team formed"},
    {"when": "was stopped before it finished", "text": "alpha was stopped"},
    {"when": "alpha: second job", "text": "second job done"},
    {"when": "form a second team", "toolCalls": [call("spawn_teammate", {"name": "beta", "description": "slow too",
                                                                         "prompt": "beta: long job"})]},
    {"when": "beta: long job", "text": "never finished either", "delayMs": 60_000},
    {"when": '"name":"beta"', "text": "beta formed"},
    *({"text": "noted"} for _ in range(4)),
]


def turn_ends(session) -> list[dict]:
    return [e["data"]["reason"] for e in session.events if e["type"] == "turn/end"]


def texts_of(agent) -> list[str]:
    return [b["text"] for e in agent.session.events if e["type"] == "assistant/message"
            for b in e["data"]["message"]["content"] if b["type"] == "text"]


async def running_member(host, lead, count: int = 1) -> str:
    teams = host.root.get("agentTeams")
    await until(lambda: len(teams.state(lead).members) == count, what="the teammate in the roster")
    member = list(teams.state(lead).members)[-1]
    await until(lambda: host.root.get("agents").get(member) is not None
                and host.root.get("agents").get(member).status == "running", what="alpha mid-turn")
    return member


def assert_drained(host, lead, member: str, stops: int) -> None:
    agents, subagents = host.root.get("agents"), host.root.get("subagents")
    assert agents.get(member) is None and member not in subagents.activations
    assert subagents.activations == {} and [a.id for a in agents.live.values()] == [lead.id]
    stored = agents.store.read(member)
    aborted = [r for r in turn_ends(stored) if r["kind"] == "aborted"]
    assert len(aborted) == stops and all(r["reason"]["kind"] == "parent" for r in aborted)
    stopped = [n for n in notices(lead) if n["content"][0]["text"] ==
               f"Background subagent {member} was stopped before it finished."]
    assert len(stopped) == stops and all(n["source"]["senderSessionId"] == member for n in stopped)


@run_async()
async def test_a_config_change_and_then_disabling_the_team_row_stop_running_teammates_cleanly(tmp_path):
    home = team_home(tmp_path, REPLIES)
    async with InProcess(home) as host:
        lead = await host.root.get("agents").open()
        lead.followup("form a team")
        member = await running_member(host, lead)
        old = host.root.get("agentTeams")

        write(user_file(home), "- id: agent-team\n  config: {maxMembers: 4}\n")     # a config change
        await until(lambda: host.root.get("agentTeams") not in (None, old), what="the reloaded Team service")
        await until(lambda: "alpha was stopped" in texts_of(lead) and lead.status == "idle",
                    what="the Lead to answer the settlement notice")
        assert old.closed and all(t.done() for t in old.recovering.values()) and not old.admitted
        assert_drained(host, lead, member, stops=1)
        with pytest.raises(TeamError, match="^Agent Teams service is disposing$"):   # admission is closed
            await old.send_message(lead, {"target": "alpha", "delivery": "quiet", "content": []})
        teams = host.root.get("agentTeams")
        assert teams.config["maxMembers"] == 4
        assert [(m["name"], m["status"]) for m in teams.list_members(lead)] == [("lead", "idle"), ("alpha", "inactive")]
        assert fold_team(lead.id, lead.session.events).members[member]["phase"] == "active"

        sent = await teams.send_message(lead, {"target": "alpha", "delivery": "wakeup",
                                               "content": [{"type": "text", "text": "alpha: second job"}]})
        assert sent["status"] == "accepted"                 # the new service wakes it from its log
        await until(lambda: host.root.get("agents").get(member) is not None, what="alpha resumed")
        await until(lambda: host.root.get("agents").get(member) is None, what="alpha settled again")
        assert [r["kind"] for r in turn_ends(host.root.get("agents").store.read(member))] == ["aborted", "completed"]

        await lead.when_idle()
        lead.followup("form a second team")     # another slow teammate, then the row goes away
        member2 = await running_member(host, lead, count=2)
        write(user_file(home), "- id: agent-team\n  disabled: true\n")
        await until(lambda: host.root.get("agentTeams") is None, what="the Team row to unload")
        await until(lambda: len(notices(lead)) == 3 and lead.status == "idle", what="the third notice")
        await until(lambda: host.root.get("agents").get(member2) is None
                    and host.root.get("subagents").activations == {}, what="beta to leave")
    async with InProcess(home) as host:          # the row is still off in the user layer
        stored = host.root.get("agents").store.read(member2)
        assert turn_ends(stored)[-1]["kind"] == "aborted" and turn_ends(stored)[-1]["reason"]["kind"] == "parent"
        queued = [e for e in host.root.get("agents").store.read(lead.id).events if e["type"] == "team/message/queued"]
        assert len(queued) == 1 and json.dumps(queued[0]["data"]["message"]["content"]).count("second job") == 1
