"""The Team guidance (dsh's ``team:policy`` section) reaches the model in the system message of every
Team member's request, over real HTTP: an OpenAI-compatible server on 127.0.0.1 records the bodies. The
Lead's system message is the deployment's own text, then the guidance with "role lead, name lead" and
the Team id; teammate ``alpha``'s carries it with its own name; an ordinary sub-agent of the same Lead,
in no Team, gets none. The request header in the Lead's log holds the same text."""
from __future__ import annotations

import json

from tests.agents.sse_server import SseServer
from tests.agents.subagent_helpers import call
from tests.agents.test_subagents_models import last_text, text, tool_calls
from tests.host.helpers import InProcess, make_home, run_async, until

PERSONA = "You are the deployment's persona."
GUIDANCE = "Agent Teams is on in this session."


def rows(server) -> str:
    out = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
           {"id": "llm", "name": "@dshctl/llm-openai",
            "config": {"baseUrl": server.base_url, "model": "flash", "apiKey": "sk-test"}},
           {"id": "agent-loop", "name": "@dshctl/agent-loop", "config": {"system": PERSONA}},
           {"id": "subagents", "name": "@dshctl/subagents"},
           {"id": "subagent-tools", "name": "@dshctl/subagent-tools", "config": {"control": False}},
           {"id": "agent-team", "name": "@dshctl/agent-team"},
           {"id": "agent-team-tools", "name": "@dshctl/agent-team-tools"}]
    return "".join(f"    - {json.dumps(row)}\n" for row in out)


def route(request):
    body, last = request["body"], last_text(request)
    if not body.get("tools"):
        return text("Title")
    if last == "form a team":
        spawn = call("spawn_teammate", {"name": "alpha", "description": "helper", "prompt": "alpha: job"})
        plain = call("subagent", {"description": "plain", "prompt": "plain: job"})
        return tool_calls([(c["name"], c["arguments"]) for c in (spawn, plain)])
    if last.endswith("alpha: job") or last.endswith("plain: job"):
        return text("job done")
    return text("noted")


def system_of(body: dict) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"]


@run_async()
async def test_lead_and_teammate_get_the_team_guidance_and_a_plain_subagent_does_not(tmp_path):
    with SseServer() as server:
        server.route = route
        async with InProcess(make_home(tmp_path, rows(server))) as host:
            lead = await host.root.get("agents").open()
            lead.followup("form a team")
            await until(lambda: sum(last_text(r).endswith(": job") for r in server.requests) == 2
                        and lead.status == "idle" and not host.root.get("subagents").activations,
                        what="both children answered and settled")
            await lead.when_idle()
            member = next(iter(host.root.get("agentTeams").state(lead).members))
            headers = [e["data"]["header"] for e in lead.session.events if e["type"] == "request/header"]
        bodies = [r["body"] for r in server.requests if r["body"].get("tools")]
    lead_systems = {system_of(b) for b in bodies if last_text({"body": b}) == "form a team"}
    alpha = [system_of(b) for b in bodies if last_text({"body": b}).endswith("alpha: job")]
    plain = [system_of(b) for b in bodies if last_text({"body": b}).endswith("plain: job")]
    assert len(lead_systems) == 1 and len(alpha) == 1 and len(plain) == 1
    lead_system = lead_systems.pop()
    assert lead_system.startswith(PERSONA + "\n\n" + GUIDANCE)
    assert lead_system.endswith(f"In this Team your role is lead and your name is lead; the Lead's name is lead; "
                                f"the Team id is {lead.id}.")
    for fact in ("spawn_teammate", "send_message", "followup_task", "wait_agent", "list_agents", "noProgress",
                 "claim it with the revision", "write_scopes", "FS_STALE_VERSION"):
        assert fact in lead_system
    assert GUIDANCE in alpha[0] and alpha[0].index(PERSONA) < alpha[0].index(GUIDANCE)
    assert alpha[0].endswith(f"your role is teammate and your name is alpha; the Lead's name is lead; "
                             f"the Team id is {lead.id}.")
    assert member and GUIDANCE not in plain[0] and PERSONA in plain[0]
    assert headers and headers[0]["system"] == lead_system
