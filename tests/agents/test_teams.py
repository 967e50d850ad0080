"""Agent Teams end to end on the scripted model: the Lead makes a team of two, puts two tasks on the
board and assigns them by letting each teammate claim its own; the teammates complete their tasks and
report to the Lead through the mailbox (``followup_task``), and the Lead answers each report. Then the
host restarts and the roster, the board and the mailbox's acknowledgements are read back from the Lead's
log, by the service and by the model's own ``team_task_list``."""
from __future__ import annotations

import json

from dshctl.agents.teams.fold import fold_team
from tests.agents.subagent_helpers import call, notices, tool_results
from tests.agents.team_helpers import team_home
from tests.host.helpers import InProcess, run_async, until

DOCS = '"subject":"Docs","description":"write docs","status":'
TESTS = '"subject":"Tests","description":"write tests","status":'


def member(name: str, task: str, view: str, delay: int) -> list[dict]:
    return [
        {"when": f"{name}: take {task}", "delayMs": delay,
         "toolCalls": [call("team_task_update", {"task_id": task, "expected_revision": 1, "action": "claim"})]},
        {"when": view + '"in_progress"',
         "toolCalls": [call("team_task_update", {"task_id": task, "expected_revision": 2, "action": "complete"})]},
        {"when": view + '"completed"',
         "toolCalls": [call("followup_task", {"target": "lead", "message": f"{name} finished {task}"})]},
        # the report's answer keys on the followup result's status (its message id is random)
        {"when": '"status":"accepted"', "text": f"{name} reported", "delayMs": 300},   # the Lead reads first
    ]


REPLIES = [
    {"when": "build the thing", "toolCalls": [
        call("team_task_create", {"subject": "Docs", "description": "write docs", "write_scopes": ["docs"]}),
        call("team_task_create", {"subject": "Tests", "description": "write tests", "write_scopes": ["tests"]})]},
    {"when": '"subject":"Tests"', "toolCalls": [
        call("spawn_teammate", {"name": "alpha", "description": "docs writer", "prompt": "alpha: take task-1"}),
        call("spawn_teammate", {"name": "beta", "description": "test writer", "prompt": "beta: take task-2"})]},
    {"when": '"name":"beta"', "text": "team started"},
    *member("alpha", "task-1", DOCS, 300), *member("beta", "task-2", TESTS, 1500),
    {"when": "from alpha:", "text": "ack alpha"},
    {"when": "from beta:", "text": "ack beta"},
    {"when": "after the restart", "toolCalls": [call("team_task_list", {}), call("list_agents", {})]},
    *({"text": "noted"} for _ in range(6)),
]


def texts_of(agent) -> list[str]:
    return [b["text"] for e in agent.session.events if e["type"] == "assistant/message"
            for b in e["data"]["message"]["content"] if b["type"] == "text"]


async def build_the_thing(host):
    """The Lead's first request, until both reports are answered and both teammates settled."""
    lead = await host.root.get("agents").open()
    lead.followup("build the thing")
    await until(lambda: {"ack alpha", "ack beta"} <= set(texts_of(lead)) and len(notices(lead)) == 2
                and lead.status == "idle", what="both reports answered", timeout=30)
    return lead


@run_async()
async def test_a_team_of_two_works_the_board_reports_by_mail_and_is_read_back_after_a_restart(tmp_path):
    home = team_home(tmp_path, REPLIES)
    async with InProcess(home) as host:
        lead = await build_the_thing(host)
        lead_id = lead.id
        teams = host.root.get("agentTeams")
        board = {t["id"]: (t["status"], t.get("ownerName")) for t in teams.list_tasks(lead)}
        roster = {m["name"]: m["status"] for m in teams.list_members(lead)}
        reports = [e["data"] for e in lead.session.events if e["type"] == "user/message"
                   and e["data"]["source"]["kind"] == "team-message"]
    assert board == {"task-1": ("completed", "alpha"), "task-2": ("completed", "beta")}
    assert roster == {"lead": "idle", "alpha": "inactive", "beta": "inactive"}      # settled teammates leave
    assert sorted(r["source"]["senderName"] for r in reports) == ["alpha", "beta"]
    for report in reports:
        name = report["source"]["senderName"]
        assert report["content"][0]["text"] == f"Team message {report['source']['messageId']} from {name}:"
        assert report["content"][1]["text"] in ("alpha finished task-1", "beta finished task-2")

    async with InProcess(home) as host:
        store = host.root.get("agents").store
        stored = fold_team(lead_id, store.read(lead_id).events)
        assert [(m["name"], m["phase"]) for m in stored.members.values()] == [("alpha", "active"), ("beta", "active")]
        assert {t["id"]: t["revision"] for t in stored.tasks.values()} == {"task-1": 3, "task-2": 3}
        assert len(stored.messages) == 2 and stored.delivered == set(stored.messages)
        for m in stored.members.values():          # each teammate is a sub-agent session of the Lead
            header = store.read(m["id"]).header
            assert header["parentSession"] == lead_id and header["origin"] == "subagent"
        lead = await host.root.get("agents").open(lead_id)
        lead.followup("after the restart")
        await lead.when_idle()
        listing, members = tool_results(lead)[-2:]
    tasks = json.loads(listing)["tasks"]
    assert [(t["id"], t["status"], t["ownerName"], t["revision"]) for t in tasks] == [
        ("task-1", "completed", "alpha", 3), ("task-2", "completed", "beta", 3)]
    assert [(m["name"], m["status"]) for m in json.loads(members)] == [
        ("lead", "running"), ("alpha", "inactive"), ("beta", "inactive")]


def offered(llm, marker: str) -> set[str]:
    """The tool names of the scripted model's requests whose last message contains ``marker``."""
    from dshctl.agents.llm.script import _last_text
    return {t["name"] for r in llm.requests if marker in _last_text(r.messages) for t in r.tools or []}


@run_async()
async def test_team_tools_are_offered_to_members_only_and_mail_for_a_settled_teammate_waits_for_it(tmp_path):
    replies = [
        {"when": "form a team", "toolCalls": [call("spawn_teammate", {"name": "gamma", "description": "helper",
                                                                      "prompt": "gamma: stand by"})]},
        {"when": "gamma: stand by", "text": "standing by"},
        {"when": '"name":"gamma"', "toolCalls": [
            call("subagent", {"description": "plain", "prompt": "plain-child", "run_in_background": False})]},
        {"when": "plain-child", "text": "plain answer"},
        {"when": "plain answer", "text": "spawned"},
        {"when": "note it", "toolCalls": [call("send_message", {"target": "gamma", "message": "quiet-note"})]},
        {"when": '"status":"queued"', "text": "noted for later"},
        {"when": "wake gamma", "toolCalls": [call("followup_task", {"target": "gamma", "message": "wake-up-task"})]},
        {"when": "wake-up-task", "text": "gamma got both"},
        *({"text": "noted"} for _ in range(6)),
    ]
    home = team_home(tmp_path, replies)
    async with InProcess(home) as host:
        lead = await host.root.get("agents").open()
        lead.followup("form a team")
        await until(lambda: len(notices(lead)) == 1 and lead.status == "idle", what="gamma settles")
        llm = host.root.get("llm")
        assert {"spawn_teammate", "team_task_update", "wait_agent"} <= offered(llm, "form a team")
        assert {"spawn_teammate", "followup_task", "team_task_list"} <= offered(llm, "gamma: stand by")
        plain = offered(llm, "plain-child")
        assert plain and not plain & {"spawn_teammate", "followup_task", "team_task_list", "list_agents"}
        lead.followup("note it")
        await until(lambda: "noted for later" in texts_of(lead) and lead.status == "idle", what="the quiet note")
        lead_id = lead.id
    async with InProcess(home) as host:
        lead = await host.root.get("agents").open(lead_id)
        assert [m["delivery"] for m in fold_team(lead_id, lead.session.events).pending_messages()] == ["quiet"]
        lead.followup("wake gamma")
        await until(lambda: len(notices(lead)) == 2 and lead.status == "idle", what="gamma settles again")
        state = fold_team(lead_id, lead.session.events)
        gamma = next(iter(state.members))
        mail = [e["data"] for e in host.root.get("agents").store.read(gamma).events if e["type"] == "user/message"
                and e["data"]["source"]["kind"] == "team-message"]
        assert [m["content"][1]["text"] for m in mail] == ["quiet-note", "wake-up-task"]
        assert len(state.messages) == 2
        await until(lambda: fold_team(lead_id, lead.session.events).delivered == set(state.messages),
                    what="both acknowledged")
    assert "gamma got both" in [b["text"] for n in notices(lead) for b in n["content"]]
