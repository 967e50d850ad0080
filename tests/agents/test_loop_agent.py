"""The loop-agent example bundle (examples/bundles/loop-agent) as its README describes it: each point a
test, on the scripted model in a host booted in this process (the git + CLI story is in
test_loop_agent_story.py)."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest

from tests.agents.loop_agent_helpers import loop_agent_home
from tests.host.helpers import InProcess, bundle_dir, run_async, write

# A plugin that fails the first ``fail`` model requests with ``code``/``message`` (an llm/stream hook).
FLAKY = '''
name = "flaky"
schema = {"type": "object", "default": {}}
def apply(ctx, config):
    state = {"left": config.get("fail", 0), "requests": []}
    ctx.provide("flaky", state)
    async def stream(options, next_):
        state["requests"].append(options)
        if state["left"] > 0:
            state["left"] -= 1
            async def failing():
                yield {"type": "finish", "reason": {"kind": "error", "failure": {
                    "message": config.get("message", "upstream is down"), "code": config.get("code", "HTTP_500")}}}
            return failing()
        return await next_()
    ctx.on("llm/stream", stream)
'''


def add_flaky(home, config: dict) -> None:
    """Mount FLAKY in the test bundle with ``config``."""
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(bundle_dir(home) / "plugins" / "flaky.py", FLAKY)
    row = {"id": "flaky", "name": "./plugins/flaky.py", "config": config}
    write(patch, patch.read_text() + f"    - {json.dumps(row)}\n")


def texts(agent, kind="user/message"):
    out = []
    for e in agent.session.events:
        if e["type"] == kind:
            message = e["data"] if kind == "user/message" else e["data"]["message"]
            out.append("".join(b.get("text", "") for b in message["content"] if b.get("type") == "text"))
    return out


def ends(agent):
    return [e["data"]["reason"]["kind"] for e in agent.session.events if e["type"] == "turn/end"]


async def until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def http(host, method, path, body=None):
    server = host.root.get("http")
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json", "X-Dshctl-Token": server.token})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


async def get_state(host):
    return await asyncio.to_thread(http, host, "GET", "/api/loop-agent/state")


def replies(n, delay_ms=0):
    return [{"text": f"answer {i}", "delayMs": delay_ms} for i in range(1, n + 1)]


@run_async()
async def test_a_session_waits_for_forever_then_continues_after_each_answer(tmp_path):
    home = loop_agent_home(tmp_path, replies(6), runner={
        "continuation": "round {{round}} after <{{lastAnswer}}> task=[{{task}}] {{unknown}}"})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("hello")
        await agent.when_idle()
        await asyncio.sleep(0.2)                     # ten supervisor polls: nothing is queued
        assert texts(agent) == ["hello"]
        assert (await get_state(host))["attachedAgents"] == 0
        agent.followup("  /FOREVER ")
        await until(lambda: len(texts(agent)) >= 3)
        agent.abort()                                # the stop button
        await agent.when_idle()
        sent = texts(agent)
        assert sent[0] == "hello" and "/forever" not in [s.strip().lower() for s in sent]
        assert sent[1] == "round 1 after <answer 1> task=[] {{unknown}}"
        assert sent[2] == "round 2 after <answer 2> task=[] {{unknown}}"


@run_async()
async def test_the_stop_button_stops_that_session_only(tmp_path):
    home = loop_agent_home(tmp_path, replies(80, delay_ms=30), runner={"continuation": "go on"})
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        a, b = await agents.open(), await agents.open()
        for agent in (a, b):
            agent.followup("/forever")
        await until(lambda: texts(a).count("go on") >= 1 and texts(b).count("go on") >= 1)
        assert (await get_state(host))["attachedAgents"] == 2
        await until(lambda: a.status == "running")
        a.abort()
        await until(lambda: ends(a)[-1:] == ["aborted"])
        stopped_at = len(texts(a))
        grew = len(texts(b))
        await until(lambda: len(texts(b)) > grew + 1)
        assert len(texts(a)) == stopped_at
        assert (await get_state(host))["attachedAgents"] == 1
        b.abort()
        await b.when_idle()


@run_async()
async def test_user_input_is_always_taken_before_the_next_continuation(tmp_path):
    home = loop_agent_home(tmp_path, [{"text": "slow", "delayMs": 200}] + replies(10),
                           runner={"continuation": "go on"})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("/forever")
        await until(lambda: agent.status == "running" and "go on" in texts(agent))
        agent.followup("a human message")            # arrives while a continuation turn runs
        await until(lambda: texts(agent).count("go on") >= 2)
        agent.abort()
        await agent.when_idle()
        sent = texts(agent)
        human = sent.index("a human message")
        assert sent[human - 1] == "go on" and sent[human + 1] == "go on"


@run_async()
async def test_the_global_switch_gates_forever_and_switching_off_stops_every_loop(tmp_path):
    home = loop_agent_home(tmp_path, replies(60), runner={"continuation": "go on"})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        off = await asyncio.to_thread(http, host, "POST", "/api/loop-agent/enabled", {"enabled": False})
        assert off["enabled"] is False and off["changed"] is True and off["attachedAgents"] == 0
        sidecar = home / "profiles" / "p" / ".dsh-loop-agent.json"
        assert off["path"] == str(sidecar) and json.loads(sidecar.read_text())["disabled"] is True
        again = await asyncio.to_thread(http, host, "POST", "/api/loop-agent/enabled", {"enabled": False})
        assert again["changed"] is False
        agent.followup("/forever")                    # ignored while off
        await agent.when_idle()
        await asyncio.sleep(0.2)
        assert texts(agent) == []
        await asyncio.to_thread(http, host, "POST", "/api/loop-agent/enabled", {"enabled": True})
        agent.followup("/forever")
        await until(lambda: "go on" in texts(agent))
        write(sidecar, json.dumps({"disabled": True}))   # a hand edit takes effect at the next phase
        await until(lambda: (agent.status == "idle" and
                             any(e["type"] == "loop-agent/stopped" for e in agent.session.events)), 3)
        count = len(texts(agent))
        await asyncio.sleep(0.3)
        assert len(texts(agent)) == count
        assert (await get_state(host))["attachedAgents"] == 0


@run_async()
async def test_continuation_override_route_and_default(tmp_path):
    home = loop_agent_home(tmp_path, replies(20), runner={"continuation": "default text"})
    async with InProcess(home) as host:
        state = await get_state(host)
        assert state["continuation"] == state["defaultContinuation"] == "default text"
        assert state["enabled"] is True and state["profile"] == "p" and state["version"] == 1
        changed = await asyncio.to_thread(http, host, "POST", "/api/loop-agent/continuation",
                                          {"continuation": "override {{round}}"})
        assert changed["continuation"] == "override {{round}}" and changed["changed"] is True
        agent = await host.root.get("agents").open()
        agent.followup("/forever")
        await until(lambda: "override 1" in texts(agent))
        agent.abort()
        await agent.when_idle()
        cleared = await asyncio.to_thread(http, host, "POST", "/api/loop-agent/continuation", {"continuation": ""})
        assert cleared["continuation"] == "default text"


@run_async()
async def test_a_failed_turn_is_retried_with_backoff_then_escalated(tmp_path):
    home = loop_agent_home(tmp_path, replies(10), runner={"continuation": "go on", "escalateAfterFailures": 2,
                                                           "initialBackoffMs": 30, "backoffFactor": 2})
    add_flaky(home, {"fail": 0})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("/forever")
        await until(lambda: "go on" in texts(agent))
        host.root.get("flaky")["left"] = 3          # the next three requests fail
        await until(lambda: ends(agent).count("error") >= 3 and ends(agent)[-1] == "completed", 10)
        agent.abort()
        await agent.when_idle()
        prompts_by_turn, turn = {}, None
        for e in agent.session.events:
            if e["type"] == "turn/start":
                turn = e["data"]["turn"]
            elif e["type"] == "user/message":
                prompts_by_turn.setdefault(turn, e["data"]["content"][0]["text"])
        turn_ends = [(e["data"]["turn"], e["data"]["reason"]["kind"]) for e in agent.session.events
                     if e["type"] == "turn/end"]
        first_fail = next(i for i, (_, kind) in enumerate(turn_ends) if kind == "error")
        prompts = [prompts_by_turn[n] for n, _ in turn_ends[first_fail:first_fail + 4]]
        assert [kind for _, kind in turn_ends[first_fail:first_fail + 4]] == ["error"] * 3 + ["completed"]
        assert prompts[0] == prompts[1] == "go on"          # the same prompt again
        assert prompts[2].startswith("The previous attempt failed 2 times in a row with HTTP_500: upstream")
        assert prompts[2].endswith("go on")
        assert prompts[3].startswith("The previous attempt failed 3 times")


@run_async()
async def test_context_pressure_compacts_before_the_retry(tmp_path):
    long = [{"text": "x" * 400} for _ in range(5)]
    home = loop_agent_home(tmp_path, long + [{"text": "summary of it all"}] + replies(5),
                           runner={"continuation": "go on"})
    add_flaky(home, {"code": "context_length_exceeded", "message": "maximum context length is 4096 tokens"})
    user = home / "profiles" / "p" / "cordis.patch.yml"
    write(user, user.read_text() + "- id: compaction-basic\n  config: {auto: false, retainRatio: 0.16}\n")
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        for i in range(5):
            agent.followup(f"q{i}")
            await agent.when_idle()
        host.root.get("flaky")["left"] = 1
        agent.followup("/forever")
        await until(lambda: any(e["type"] == "compaction/end" for e in agent.session.events))
        await until(lambda: ends(agent).count("completed") >= 7)
        agent.abort()
        await agent.when_idle()
        kinds = [e["type"] for e in agent.session.events]
        assert kinds.index("compaction/start") < kinds.index("compaction/end")
        summary = next(e for e in agent.session.events if e["type"] == "compaction/summary")
        assert summary["data"]["summary"] == "summary of it all"
        from dshctl.agents.session.history import derive_history
        first = derive_history(agent.session.events)[0]
        assert first["content"][0]["text"].startswith("[Summary of the earlier conversation]")


@run_async()
async def test_questions_are_answered_for_a_driven_session_only(tmp_path):
    ask = {"name": "ask_user_question", "arguments": {"question": "Which way?", "options": [
        {"label": "left"}, {"label": "right（推荐）"}]}}
    home = loop_agent_home(tmp_path, [{"toolCalls": [ask]}, {"text": "went right"}, {"toolCalls": [ask]},
                                      {"text": "asked"}] + replies(5),
                           runner={"continuation": "go on", "pollIntervalMs": 400})   # the switch wins the race
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("/forever")
        await until(lambda: "went right" in texts(agent, "assistant/message"))
        await asyncio.to_thread(http, host, "POST", "/api/loop-agent/enabled", {"enabled": False})
        await until(lambda: any(e["type"] == "loop-agent/stopped" for e in agent.session.events))
        await agent.when_idle()
        result = [e for e in agent.session.events if e["type"] == "tool/result"][0]
        assert result["data"]["message"]["content"][0]["content"][0]["text"] == "The user chose: right（推荐）"
        asked = len([e for e in agent.session.events if e["type"] == "tool/result"])
        agent.followup("ask again")                  # no longer driven: nobody answers for the user
        await agent.when_idle()
        results = [e for e in agent.session.events if e["type"] == "tool/result"]
        assert len(results) > asked
        assert results[-1]["data"]["message"]["content"][0].get("isError") is True
        assert results[-1]["data"]["error"]["code"] == "NO_USER"


@run_async()
async def test_a_restarted_host_resumes_recent_sessions_and_holds_stale_ones(tmp_path):
    home = loop_agent_home(tmp_path, replies(30), runner={"continuation": "go on", "idleGraceMs": 60000})
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        recent, stale = await agents.open(), await agents.open()
        for agent in (recent, stale):
            agent.followup("/forever")
        await until(lambda: "go on" in texts(recent) and "go on" in texts(stale))
        ids = recent.id, stale.id
    # Age the stale session past the grace window: rewrite nothing, just pretend its log is old by
    # restarting with a grace of 1 ms for that check.
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        recent = await agents.open(ids[0])
        before = len(texts(recent))
        await until(lambda: len(texts(recent)) > before)       # re-armed and continuing
        recent.abort()
        await recent.when_idle()
    user = home / "profiles" / "p" / "cordis.patch.yml"
    write(user, user.read_text().replace('"idleGraceMs": 60000', '"idleGraceMs": 1'))
    await asyncio.sleep(0.05)
    async with InProcess(home) as host:
        stale = await host.root.get("agents").open(ids[1])
        before = len(texts(stale))
        await asyncio.sleep(0.3)
        assert len(texts(stale)) == before                    # waits for the user
        stale.followup("I am back")
        await until(lambda: texts(stale)[-1:] == ["go on"])
        stale.abort()
        await stale.when_idle()


def approval_home(tmp_path):
    """The loop-agent home with dshctl's approval row: ``echo`` asks first. The model's second turn (the
    first continuation) calls echo."""
    script = [{"text": "armed"}, {"toolCalls": [{"name": "echo", "arguments": {"text": "from the loop"}}]},
              {"text": "echoed"}] + replies(20, delay_ms=20)
    home = loop_agent_home(tmp_path, script, runner={"continuation": "go on"}, probe={})
    patch = bundle_dir(home) / "cordis.patch.yml"
    write(patch, patch.read_text() + '    - {"id": "approval", "name": "@dshctl/approval", "config": {"ask": ["echo"]}}\n')
    return home


def decided(agent):
    return [e["data"]["outcome"] for e in agent.session.events if e["type"] == "approval/decided"]


@run_async()
async def test_a_driven_session_gets_approvals_allowed_once_through_the_approval_service(tmp_path):
    async with InProcess(approval_home(tmp_path)) as host:
        agent = await host.root.get("agents").open()
        agent.followup("/forever")
        await until(lambda: decided(agent))
        await until(lambda: any(e["type"] == "tool/result" for e in agent.session.events))
        agent.abort()
        await agent.when_idle()
    assert decided(agent)[0] == "allowed-once"
    result = next(e for e in agent.session.events if e["type"] == "tool/result")
    assert "from the loop" in json.dumps(result["data"]) and '"isError": true' not in json.dumps(result["data"])


@run_async()
async def test_policy_never_rejects_even_in_a_driven_session(tmp_path):
    async with InProcess(approval_home(tmp_path)) as host:
        agent = await host.root.get("agents").open()
        host.root.get("approval").set_policy(agent, "never")
        agent.followup("/forever")
        await until(lambda: decided(agent))
        agent.abort()
        await agent.when_idle()
    assert decided(agent)[0] == "rejected"


@run_async()
async def test_an_undriven_session_is_not_answered_by_the_loop(tmp_path):
    async with InProcess(approval_home(tmp_path)) as host:
        agent = await host.root.get("agents").open()
        agent.followup("no loop here")          # answered "armed": never armed, so no continuation
        await agent.when_idle()
        agent.followup("call echo")              # the script's echo call, with nobody to ask
        await agent.when_idle()
    assert decided(agent) == ["unavailable"]


@run_async()
async def test_an_archived_session_is_stopped_its_reply_cancelled_and_not_revived(tmp_path):
    from dshctl.agents.workspace import set_archived, workspace_file
    home = loop_agent_home(tmp_path, replies(200, delay_ms=40), runner={"continuation": "go on"})
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        kept, hidden = await agents.open(), await agents.open()
        for agent in (kept, hidden):
            agent.followup("/forever")
        await until(lambda: "go on" in texts(hidden) and hidden.status == "running")
        assert set_archived(workspace_file(home, "p"), hidden.session.id, True) is True
        await until(lambda: any(e["type"] == "loop-agent/stopped" for e in hidden.session.events))
        await hidden.when_idle()
        assert ends(hidden)[-1] == "aborted"                      # the running reply was cancelled
        count = len(texts(hidden))
        assert (await get_state(host))["attachedAgents"] == 1
        assert set_archived(workspace_file(home, "p"), hidden.session.id, False) is True
        await asyncio.sleep(0.3)
        assert len(texts(hidden)) == count                        # unarchiving does not revive it
        grown = len(texts(kept))
        await until(lambda: len(texts(kept)) > grown)             # the other session runs on
        kept.abort()
