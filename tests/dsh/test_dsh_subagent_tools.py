"""dsh's sub-agent tools, differentially: one headless turn of the real dsh against a scripted server on
127.0.0.1 calls ``list_agents``, ``interrupt_agent`` and ``send_message`` (no child to talk to), and
dshctl's tools answer the same calls. Names and parameter schemas must be equal (descriptions are each
side's own words), and so must the result texts."""
from __future__ import annotations

import asyncio
import json

from dshctl.agents.subagents.schemas import TOOL_PARAMETERS
from tests.agents.subagent_helpers import subagent_tool_texts
from tests.agents.sse_server import SseServer
from tests.dsh.test_dsh_tools import Router, without_descriptions

CALLS = [
    ("list_agents", {}),
    ("list_agents", {"scope": "descendants"}),
    ("interrupt_agent", {"agent_id": "nobody"}),
    ("send_message", {"subagent_id": "nobody", "message": "hi"}),
]


def dsh_requests(real_dsh, tmp_path, calls):
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    with SseServer() as server:
        server.script = Router(server, calls)
        env = real_dsh.env(home, DEEPSEEK_BASE_URL=f"http://127.0.0.1:{server.port}", DEEPSEEK_API_KEY="sk-test",
                           DSH_PERMISSION_MODE="danger-full-access")
        done = real_dsh.run(home, "--profile", "headless", "--patch", str(real_dsh.no_typert_patch), "Work.",
                            cwd=ws, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return [r["body"] for r in server.requests if r["body"].get("tools")]


def test_subagent_tools_match_dsh_by_name_schema_and_result_text(real_dsh, tmp_path):
    requests = dsh_requests(real_dsh, tmp_path, CALLS)
    offered = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    for name, parameters in TOOL_PARAMETERS.items():
        assert name in offered, name
        assert without_descriptions(parameters) == without_descriptions(offered[name]), name
    theirs = {m["tool_call_id"]: m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"}
    assert len(theirs) == len(CALLS)
    ours = asyncio.run(subagent_tool_texts(tmp_path / "ours", CALLS))
    for n, (call, text) in enumerate(zip(CALLS, ours), 1):
        assert text == theirs[f"call_{n}"], call
