"""``@dshctl/llm-deepseek`` against the real dsh's ``llm-deepseek`` on the same server: the body settings
of a turn's request are equal (model, streaming, thinking, effort, max_tokens), and so are the route and
the bearer token, both read from ``DEEPSEEK_BASE_URL`` / ``DEEPSEEK_API_KEY``."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.deepseek import resolved
from dshctl.agents.llm.openai import OpenAiModel
from tests.agents.sse_server import Sse, SseServer, chunk
from tests.dsh.test_dsh_tools import Router
from tests.host.helpers import DSHCTL, WAIT_S, make_home

SETTINGS = ("model", "stream", "stream_options", "thinking", "reasoning_effort", "max_tokens")


def answer():
    return Sse([chunk({"role": "assistant", "content": "hi"}), chunk(finish="stop"), "[DONE]"])


def test_request_settings_equal_dshs(real_dsh, tmp_path, monkeypatch):
    with SseServer() as server:
        server.script = [answer(), answer()]
        base = f"http://127.0.0.1:{server.port}"
        env = real_dsh.env(tmp_path / "home", DEEPSEEK_BASE_URL=base, DEEPSEEK_API_KEY="sk-same")
        done = real_dsh.run(tmp_path / "home", "--profile", "headless", "--patch", str(real_dsh.no_typert_patch),
                            "Say hi.", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        theirs = next(r for r in server.requests if r["body"].get("tools"))
        monkeypatch.setenv("DEEPSEEK_BASE_URL", base)
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-same")
        monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))    # the anonymous user id dsh made there
        server.script = [answer()]
        model = OpenAiModel(resolved({}))
        options = GenerateOptions(provider="deepseek", model=model.model, messages=[
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "Say hi."}], "source": {"kind": "user"}}],
            session_id="session-ours")

        async def one():
            chunks = [c async for c in model.stream(options)]
            await model.aclose()
            return chunks
        asyncio.run(one())
        ours = server.requests[-1]
    assert {k: ours["body"].get(k) for k in SETTINGS} == {k: theirs["body"].get(k) for k in SETTINGS}
    assert ours["path"] == theirs["path"] == "/chat/completions"
    assert ours["headers"]["authorization"] == theirs["headers"]["authorization"] == "Bearer sk-same"
    names = {k for k in theirs["headers"] if k.startswith("x-deepseek-harness-")}
    assert names == {"x-deepseek-harness-user-id", "x-deepseek-harness-session-id"}
    assert {k for k in ours["headers"] if k.startswith("x-deepseek-harness-")} == names
    assert ours["headers"]["x-deepseek-harness-user-id"] == theirs["headers"]["x-deepseek-harness-user-id"]
    assert ours["headers"]["x-deepseek-harness-session-id"] == "session-ours"
    shape = re.compile(r"^[a-z-]+/[0-9][^ ]* \(\+https://[^ )]+\)$")     # product/version (+url)
    assert shape.match(theirs["headers"]["user-agent"]) and shape.match(ours["headers"]["user-agent"])
    assert ours["headers"]["user-agent"].startswith("dshctl/")
    for side in (ours, theirs):
        assert (side["headers"]["content-type"], side["headers"]["accept"]) == ("application/json",
                                                                                "text/event-stream")


def dshctl_home(tmp_path):
    rows = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "@dshctl/llm-deepseek"}, {"id": "agent-loop", "name": "@dshctl/agent-loop"},
            {"id": "sandbox", "name": "@dshctl/sandbox"},
            {"id": "approval", "name": "@dshctl/approval", "config": {"defaultPreset": "workspace-write"}},
            {"id": "session-title", "name": "@dshctl/session-title"}]
    return make_home(tmp_path / "ours", "".join(f"    - {json.dumps(row)}\n" for row in rows))


def test_title_request_and_turn_settings_equal_dshs_through_agent_run(real_dsh, tmp_path):
    """`dshctl agent run` (embedded: llm-deepseek, sandbox, approval, session-title rows) and dsh's headless turn,
    one prompt, one server: the title request is equal but for ids (system, framed prompt with the prompt's
    seq, max_tokens, thinking off), the turn's body settings and its conversation (the prompt, then the
    runtime-context snapshot) are equal, and the harness headers carry one user id and each side's session id."""
    prompt = "Fix the failing login test."
    ws = tmp_path / "ws"
    ws.mkdir()
    with SseServer() as server:
        server.script = Router(server, [])
        base = f"http://127.0.0.1:{server.port}"
        env = real_dsh.env(tmp_path / "home", DEEPSEEK_BASE_URL=base, DEEPSEEK_API_KEY="sk-same")
        done = real_dsh.run(tmp_path / "home", "--profile", "headless", "--patch", str(real_dsh.no_typert_patch),
                            prompt, cwd=ws, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        theirs = list(server.requests)
        server.requests.clear()
        home = dshctl_home(tmp_path)
        ours_run = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                                   prompt], cwd=ws, capture_output=True, text=True, timeout=WAIT_S,
                                  env={**os.environ, "DEEPSEEK_BASE_URL": base, "DEEPSEEK_API_KEY": "sk-same",
                                       "DSH_HOME": str(tmp_path / "home")})
        assert ours_run.returncode == 0, ours_run.stderr[-2000:]
        ours = list(server.requests)
    their_title = next(r for r in theirs if not r["body"].get("tools"))
    our_title = next(r for r in ours if not r["body"].get("tools"))
    their_seq = _framed_seq(their_title["body"])
    our_body = json.loads(json.dumps(our_title["body"]).replace(f'\\"seq\\":{_framed_seq(our_title["body"])}',
                                                                f'\\"seq\\":{their_seq}'))
    assert our_body == their_title["body"]
    assert their_title["body"]["thinking"] == {"type": "disabled"} and "reasoning_effort" not in our_body
    their_turn = next(r for r in theirs if r["body"].get("tools"))
    our_turn = next(r for r in ours if r["body"].get("messages") and r["body"]["messages"][-1]["role"] == "user"
                    and r is not our_title)
    assert {k: our_turn["body"].get(k) for k in SETTINGS} == {k: their_turn["body"].get(k) for k in SETTINGS}
    context = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
    their_context = [m for m in their_turn["body"]["messages"] if m["role"] == "user" and context in m["content"]]
    our_context = [m for m in our_turn["body"]["messages"] if m["role"] == "user" and context in m["content"]]
    assert len(their_context) == 1 and our_context == their_context
    def conversation(body):       # the system text is each side's own (dshctl's profile sets none)
        return [m for m in body["messages"] if m["role"] != "system"]
    assert conversation(our_turn["body"]) == conversation(their_turn["body"])        # prompt, then the context
    titles = [json.loads(line)["data"] for line in ours_run.stdout.splitlines()
              if json.loads(line).get("type") == "session/title"]
    assert [t["source"]["kind"] for t in titles] == ["fallback", "provider"], ours_run.stdout[-2000:]
    assert titles[0]["title"] == prompt and titles[1]["title"] == "Title"      # the server's answer
    session_ids = {r["headers"].get("x-deepseek-harness-session-id") for r in (our_title, our_turn)}
    assert len(session_ids) == 1 and session_ids.pop().startswith("session-")   # one session, as dsh's two
    assert {r["headers"]["x-deepseek-harness-session-id"] for r in theirs} == {
        their_turn["headers"]["x-deepseek-harness-session-id"]}
    for request in (our_title, our_turn):
        assert request["headers"]["x-deepseek-harness-user-id"] == their_turn["headers"]["x-deepseek-harness-user-id"]


def _framed_seq(body) -> int:
    return int(re.search(r'\[\{"seq":(\d+),', body["messages"][-1]["content"]).group(1))
