"""dsh's Agent Teams tools, differentially: one headless turn of the real dsh, with its experimental
``agent-team`` and ``tool-agent-team`` rows switched on (``team.patch.yml``, as dsh's own team example
composes them), runs a task-board session against a scripted server on 127.0.0.1, and dshctl's Team tools
answer the same calls. The ten tools' names and parameter schemas must be equal (descriptions are each
side's own words), and so must every result text once the Lead's session id is written as ``<lead>``."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

from dshctl.agents.teams.policy import section_text
from dshctl.agents.teams.schemas import TEAM_TOOL_PARAMETERS
from tests.agents.sse_server import SseServer
from tests.agents.team_helpers import team_tool_texts
from tests.dsh.test_dsh_tools import Router, without_descriptions

TEAM_PATCH = Path(__file__).with_name("team.patch.yml")
CALLS = [
    ("team_task_create", {"subject": "Write docs", "description": "docs please", "write_scopes": ["./docs/"]}),
    ("team_task_create", {"subject": "Tests", "description": "t", "blocked_by": ["task-1"], "write_scopes": ["docs/a"]}),
    ("team_task_create", {"subject": " ", "description": "blank subject"}),
    ("team_task_create", {"subject": "Loop", "description": "x", "blocked_by": ["task-7"]}),
    ("team_task_update", {"task_id": "task-2", "expected_revision": 1, "action": "claim"}),
    ("team_task_update", {"task_id": "task-1", "expected_revision": 1, "action": "claim"}),
    ("team_task_list", {}),
    ("team_task_list", {"ready": False, "limit": 1}),
    ("team_task_list", {"owner": "unowned"}),
    ("team_task_update", {"task_id": "task-1", "expected_revision": 1, "action": "complete"}),
    ("team_task_update", {"task_id": "task-1", "expected_revision": 2, "action": "complete"}),
    ("team_task_get", {"task_id": "task-2"}),
    ("team_task_update", {"task_id": "task-2", "expected_revision": 1, "action": "set_dependencies",
                          "blocked_by": ["task-2"]}),
    ("team_task_update", {"task_id": "task-1", "expected_revision": 3, "action": "delete"}),
    ("team_task_update", {"task_id": "task-2", "expected_revision": 1, "action": "reassign", "owner": "ghost"}),
    ("team_task_update", {"task_id": "task-2", "expected_revision": 1, "action": "edit", "write_scopes": ["../up"]}),
    ("team_task_get", {"task_id": "task-9"}),
    ("team_task_list", {"limit": 0}),
    ("list_agents", {}),
    ("send_message", {"target": "nobody", "message": "hi"}),
    ("followup_task", {"target": "lead", "message": "hi"}),
    ("wait_agent", {}),
    ("interrupt_agent", {"target": "x"}),
    ("spawn_teammate", {"name": "Bad Name", "description": "d", "prompt": "p"}),
]


def dsh_requests(real_dsh, tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir(parents=True)
    with SseServer() as server:
        server.script = Router(server, CALLS)
        env = real_dsh.env(home, DEEPSEEK_BASE_URL=f"http://127.0.0.1:{server.port}", DEEPSEEK_API_KEY="sk-test",
                           DSH_PERMISSION_MODE="danger-full-access")
        done = real_dsh.run(home, "--profile", "headless", "--patch", str(TEAM_PATCH), "Work.", cwd=ws, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return [r["body"] for r in server.requests if r["body"].get("tools")]


def lead_of(texts: list[str]) -> str:
    import json
    listing = next(json.loads(t) for t in texts if t.startswith('[{"id":'))
    return listing[0]["id"]


def test_team_tools_match_dsh_by_name_schema_and_result_text(real_dsh, tmp_path):
    requests = dsh_requests(real_dsh, tmp_path / "dsh")
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    for name, parameters in TEAM_TOOL_PARAMETERS.items():
        assert name in offered, name
        assert without_descriptions(parameters) == without_descriptions(offered[name]), name
    by_call = {m["tool_call_id"]: m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"}
    theirs = [by_call[f"call_{n}"] for n in range(1, len(CALLS) + 1)]
    lead_id, ours = asyncio.run(team_tool_texts(tmp_path / "ours", CALLS))
    assert len(ours) == len(CALLS)
    theirs = [t.replace(lead_of(theirs), "<lead>") for t in theirs]
    ours = [t.replace(lead_id, "<lead>") for t in ours]
    # each side's model name is its own deployment's; the rest of the Lead's row must agree
    theirs = [t.replace('"model":"deepseek-v4-flash"', '"model":"<model>"') for t in theirs]
    ours = [t.replace('"model":"scripted"', '"model":"<model>"') for t in ours]
    for call, mine, real in zip(CALLS, ours, theirs):
        assert mine == real, call
    assert_same_team_guidance_facts(requests[0]["messages"][0])


def assert_same_team_guidance_facts(system_message: dict) -> None:
    """dsh puts its ``team:policy`` section in the Lead's system message. dshctl words its guidance
    itself (``teams/policy.py``), but names every tool, code and field that dsh's section names, and
    tells the Lead the same role and name."""
    assert system_message["role"] == "system"
    system = system_message["content"]
    start = system.index("Agent Teams is available in this session")
    identity = re.search(r"Your Team role is (\w+); your Team name is (\w+); Team id is \S+\.", system[start:])
    assert identity is not None and identity.groups() == ("lead", "lead")
    facts = set(re.findall(r"\b(?:[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+|noProgress)\b",
                           system[start:start + identity.start()]))
    assert {"send_message", "followup_task", "wait_agent", "list_agents", "FS_STALE_VERSION"} <= facts
    ours = section_text({"role": "lead", "name": "lead", "id": "<lead>"})
    assert sorted(f for f in facts if f not in ours) == []
    assert "your role is lead and your name is lead" in ours
