"""Sub-agents on the scripted model: parallel continuable children with settlement notices, one-shot
foreground children (spawn and fork), depth, failures, interrupts, and the child logs' lineage."""
from __future__ import annotations

import asyncio
import time

import pytest

from dshctl.agents.subagents import descriptor
from dshctl.agents.subagents.service import SubagentError
from tests.agents.subagent_helpers import call, subagent_home, tool_results
from tests.host.helpers import InProcess, bundle_dir, run_async, until, write


def children_of(host, parent_id):
    store = host.root.get("agents").store
    return [i for i in store.list() if i.header.get("parentSession") == parent_id]


def notices(agent):
    return [e["data"] for e in agent.session.events if e["type"] == "user/message"
            and e["data"]["source"]["kind"] == "subagent-settled"]


@run_async()
async def test_five_background_children_run_in_parallel_and_each_settles_with_a_notice(tmp_path):
    tasks = [f"task-{n}" for n in range(1, 6)]
    replies = [{"toolCalls": [call("subagent", {"description": f"job {t}", "prompt": t}) for t in tasks]},
               {"when": "started subagent", "text": "waiting for them"},
               *({"when": t, "text": f"answer to {t}", "delayMs": 600} for t in tasks),
               *({"when": "Background subagent", "text": "all answered"} for _ in tasks)]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        seen = []
        host.root.on("subagent/start", lambda info: seen.append(("start", info["id"])))
        host.root.on("subagent/end", lambda info: seen.append(("end", info["id"], info["stopReason"])))
        agent = await host.root.get("agents").open()
        began = time.monotonic()
        agent.followup("delegate")
        # a child's notice is delivered before it is closed and its subagent/end emitted: wait for both
        await until(lambda: len(notices(agent)) == 5 and agent.status == "idle"
                    and sum(s[0] == "end" for s in seen) == 5, what="five notices and five ends")
        wall = time.monotonic() - began
        assert wall < 2.5, wall          # one child takes 0.6 s; five in a row would take 3 s
        started = [t for t in tool_results(agent) if t.startswith("started subagent ")]
        ids = {t.split()[-1] for t in started}
        assert len(ids) == 5
        assert {s[1] for s in seen if s[0] == "start"} == ids
        assert sorted(s[2] for s in seen if s[0] == "end") == ["completed"] * 5
        for notice in notices(agent):
            child = notice["source"]["senderSessionId"]
            texts = [b["text"] for b in notice["content"]]
            assert texts[0] == f"Background subagent {child} finished and will do no further work unless you send it more."
            assert texts[1] == "Its closing message:" and texts[2].startswith("answer to task-")
        children = children_of(host, agent.id)
        assert {c.id for c in children} == ids
        for info in children:
            assert info.header["origin"] == "subagent" and info.header["delegationDepth"] == 1
            assert info.header["cwd"] == agent.session.header["cwd"]
            events = host.root.get("agents").store.read(info.id).events
            found = descriptor.fold(events)
            assert found["mode"] == "continuable" and found["provider"] == "spawn"
            assert found["label"].startswith("job task-")
        assert not any(c.id in host.root.get("agents").live for c in children)   # settled children leave


@run_async()
async def test_a_foreground_spawn_returns_the_childs_answer_and_a_fork_sees_the_parents_turns(tmp_path):
    replies = [{"text": "first answer"},
               {"when": "second", "toolCalls": [call("subagent", {"description": "ask", "prompt": "child-q",
                                                                  "run_in_background": False})]},
               {"when": "child-q", "text": "child says 42"},
               {"when": "child says 42", "toolCalls": [call("subagent_fork", {"description": "fk", "prompt": "fork-q"})]},
               {"when": "fork-q", "text": "fork says hi"},
               {"when": "fork says hi", "text": "done"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agent = await agents.open()
        agent.followup("first")
        await agent.when_idle()
        agent.followup("second")
        await agent.when_idle()
        assert tool_results(agent) == ["child says 42", "fork says hi"]
        kids = {descriptor.fold(agents.store.read(c.id).events)["provider"]: c for c in children_of(host, agent.id)}
        assert set(kids) == {"spawn", "fork"}
        fork = agents.store.read(kids["fork"].id)
        assert fork.header["seedLength"] > 0
        texts = [b["text"] for e in fork.events if e["type"] == "user/message" for b in e["data"]["content"]]
        assert "first" in texts and "second" not in texts      # the completed turn only, not the one in flight
        assert descriptor.fold(fork.events)["mode"] == "one-shot"


@run_async()
async def test_depth_limit_and_a_failing_child_end_as_dsh_ends_them(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "d", "prompt": "go-deeper", "run_in_background": False})]},
               {"when": "go-deeper", "toolCalls": [call("subagent", {"description": "d2", "prompt": "deepest",
                                                                     "run_in_background": False})]},
               {"when": "exceeds maxDepth", "text": "cannot go deeper", "finish": "length"},
               {"when": "token limit", "text": "the child ran out"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("start")
        await agent.when_idle()
        (result,) = tool_results(agent)
        assert result == ("Error: subagent run hit its token limit before finishing\n"
                          "Partial output before the run ended:\ncannot go deeper")
        (child,) = children_of(host, agent.id)
        grandchild_view = host.root.get("agents").store.read(child.id)
        texts = [b["text"] for e in grandchild_view.events if e["type"] == "tool/result"
                 for r in e["data"]["message"]["content"] for b in r["content"]]
        assert texts == ["Error: subagent depth 2 exceeds maxDepth 1"]


@run_async()
async def test_approval_is_pinned_to_never_and_the_parents_sandbox_mode_is_inherited(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "d", "prompt": "p", "run_in_background": False})]},
               {"when": "p", "text": "ok"}, {"text": "done"}]
    home = subagent_home(tmp_path, replies, extra_rows=[
        {"id": "approval", "name": "@dshctl/approval"},
        {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"mode": "read-only"}}])
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        host.root.get("sandboxPolicy").set_mode(agent, "workspace-write")
        agent.followup("go")
        await agent.when_idle()
        (child,) = children_of(host, agent.id)
        events = host.root.get("agents").store.read(child.id).events
        knobs = [(e["type"], e["data"]) for e in events if e["type"] in ("sandbox/mode", "approval/policy")]
        assert knobs == [("sandbox/mode", {"mode": "workspace-write", "source": "delegation"}),
                         ("approval/policy", {"policy": "never", "source": "delegation"})]
        stored = host.root.get("agents").store.read(child.id)
        assert host.root.get("sandboxPolicy").resolve(stored).mode == "workspace-write"
        assert host.root.get("approval").policy_of(stored) == "never"
        assert host.root.get("approval").policy_of(agent.session) == "ask"


@run_async()
async def test_send_message_continues_a_settled_child_and_interrupt_stops_a_running_one(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "worker", "prompt": "first-job"})]},
               {"when": "started subagent", "text": "wait"},
               {"when": "first-job", "text": "first result"},
               {"when": "Background subagent", "text": "noted"},
               {"when": "second-job", "text": "slow " * 50, "delayMs": 20000},
               {"when": "Background subagent", "text": "stopped, fine"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agents, subagents = host.root.get("agents"), host.root.get("subagents")
        agent = await agents.open()
        agent.followup("go")
        await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="first notice")
        child_id = notices(agent)[0]["source"]["senderSessionId"]
        assert child_id not in agents.live
        await subagents.followup(agent, child_id, "second-job")           # cold-resumed from its log
        await until(lambda: agents.get(child_id) is not None and agents.get(child_id).status == "running")
        subagents.interrupt(child_id, {"kind": "ancestor", "agent": agent})
        await until(lambda: len(notices(agent)) == 2, what="second notice")
        assert notices(agent)[1]["content"][0]["text"] == f"Background subagent {child_id} was stopped before it finished."
        stored = agents.store.read(child_id)
        assert [e["data"]["reason"]["kind"] for e in stored.events if e["type"] == "turn/end"] == ["completed", "aborted"]


# A plugin failing every model request whose last message mentions "fail-me" (an llm/stream hook).
FAILING = '''
name = "failing"
schema = {"type": "object", "default": {}}
def apply(ctx, config):
    async def stream(options, next_):
        last = options.messages[-1] if options.messages else {}
        if any("fail-me" in (b.get("text") or "") for b in last.get("content") or []):
            async def failing():
                yield {"type": "finish", "reason": {"kind": "error", "failure": {
                    "message": "upstream is down", "code": "HTTP_500"}}}
            return failing()
        return await next_()
    ctx.on("llm/stream", stream)
'''


@run_async()
async def test_a_child_whose_model_errors_fails_in_both_shapes(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "fg", "prompt": "fail-me now",
                                                "run_in_background": False}),
                              call("subagent", {"description": "bg", "prompt": "fail-me later"})]},
               {"when": "started subagent", "text": "waiting"},
               {"when": "Background subagent", "text": "one failed"}]
    home = subagent_home(tmp_path, replies, extra_rows=[{"id": "failing", "name": "./plugins/failing.py"}])
    write(bundle_dir(home) / "plugins" / "failing.py", FAILING)
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("go")
        await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="the notice")
        foreground, background = tool_results(agent)
        assert foreground == "Error: subagent run failed"
        assert background.startswith("started subagent ")
        child = background.split()[-1]
        assert [b["text"] for b in notices(agent)[0]["content"]] == [
            f"Background subagent {child} failed before it finished.", "It left no closing message."]


@run_async()
async def test_per_child_model_persona_and_tool_filter_reach_the_childs_requests(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "d", "prompt": "p", "run_in_background": False})]},
               {"when": "p", "text": "ok"}, {"text": "done"}]
    home = subagent_home(tmp_path, replies, tools_config={
        "agentOptions": {"model": "small-model"}, "persona": "You are the reviewer.",
        "toolFilter": {"deny": ["subagent*", "send_message"]}})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("go")
        await agent.when_idle()
        (child,) = children_of(host, agent.id)
        events = host.root.get("agents").store.read(child.id).events
        header = next(e["data"]["header"] for e in events if e["type"] == "request/header")
        assert header["config"]["model"] == "small-model"
        assert header["system"].startswith("You are the reviewer.\n\nYou are a delegated subagent:")
        names = {t["name"] for t in header["tools"]}
        assert {"list_agents", "interrupt_agent"} <= names
        assert not names & {"subagent", "subagent_fork", "send_message"}
        parent_header = next(e["data"]["header"] for e in agent.session.events if e["type"] == "request/header")
        assert parent_header["config"]["model"] == "scripted" and "subagent" in {t["name"] for t in parent_header["tools"]}


@run_async()
async def test_a_message_to_a_running_child_is_its_next_turn_and_one_notice_follows_both(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "w", "prompt": "slow-job"})]},
               {"when": "started subagent", "text": "wait"},
               {"when": "slow-job", "text": "slow result", "delayMs": 400},
               {"when": "extra-job", "text": "extra result"},
               {"when": "Background subagent", "text": "noted"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agents, subagents = host.root.get("agents"), host.root.get("subagents")
        agent = await agents.open()
        agent.followup("go")
        await until(lambda: bool(subagents.activations), what="a running child")
        (child_id,) = subagents.activations
        await until(lambda: agents.get(child_id) is not None and agents.get(child_id).status == "running")
        await subagents.followup(agent, child_id, "extra-job")
        await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="the notice")
        await asyncio.sleep(0.1)
        assert len(notices(agent)) == 1
        assert notices(agent)[0]["content"][2]["text"] == "extra result"
        stored = agents.store.read(child_id)
        assert [e["data"]["reason"]["kind"] for e in stored.events if e["type"] == "turn/end"] == ["completed"] * 2
        stranger = await agents.open()
        with pytest.raises(SubagentError) as refused:
            await subagents.followup(stranger, child_id, "not yours")
        assert refused.value.code == "UNAUTHORIZED"


@run_async()
async def test_max_concurrent_bounds_the_children_that_run_at_once(tmp_path):
    tasks = [f"task-{n}" for n in range(1, 6)]
    replies = [{"toolCalls": [call("subagent", {"description": t, "prompt": t}) for t in tasks]},
               {"when": "started subagent", "text": "wait"},
               *({"when": t, "text": f"{t} done", "delayMs": 300} for t in tasks),
               *({"when": "Background subagent", "text": "noted"} for _ in tasks)]
    home = subagent_home(tmp_path, replies, subagents_config={"maxConcurrent": 2})
    async with InProcess(home) as host:
        running, peak = set(), []

        def start(info):
            running.add(info["id"])
            peak.append(len(running))
        host.root.on("subagent/start", start)
        host.root.on("subagent/end", lambda info: running.discard(info["id"]))
        agent = await host.root.get("agents").open()
        agent.followup("go")
        await until(lambda: len(notices(agent)) == 5 and agent.status == "idle", what="five notices")
        assert max(peak) == 2 and len(peak) == 5


@run_async()
async def test_a_child_delegating_in_turn_does_not_wait_for_a_slot_its_parent_holds(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "d", "prompt": "level-one", "run_in_background": False})]},
               {"when": "level-one", "toolCalls": [call("subagent_fork", {"description": "d2", "prompt": "level-two"})]},
               {"when": "level-two", "text": "deepest answer"},
               {"when": "deepest answer", "text": "middle answer"},
               {"when": "middle answer", "text": "top answer"}]
    home = subagent_home(tmp_path, replies, subagents_config={"maxConcurrent": 1}, tools_config={"maxDepth": 2})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("go")
        await asyncio.wait_for(agent.when_idle(), 10)
        assert tool_results(agent) == ["middle answer"]
        (child,) = children_of(host, agent.id)
        (grandchild,) = children_of(host, child.id)
        assert grandchild.header["delegationDepth"] == 2


@run_async()
async def test_a_live_child_reports_to_its_parent_and_a_resumed_child_keeps_its_depth(tmp_path):
    replies = [{"toolCalls": [call("subagent", {"description": "w", "prompt": "long-job"})]},
               {"when": "started subagent", "text": "wait"},
               {"when": "long-job", "text": "long result", "delayMs": 400},
               {"when": "halfway", "text": "thanks"},
               {"when": "Background subagent", "text": "noted"},
               {"when": "again", "text": "again done"},
               {"when": "Background subagent", "text": "noted twice"}]
    home = subagent_home(tmp_path, replies)
    async with InProcess(home) as host:
        agents, subagents = host.root.get("agents"), host.root.get("subagents")
        agent = await agents.open()
        agent.followup("go")
        await until(lambda: bool(subagents.activations), what="a running child")
        (child_id,) = subagents.activations
        await until(lambda: agents.get(child_id) is not None)
        await subagents.reportFrom(agents.get(child_id), "halfway there")
        await until(lambda: len(notices(agent)) == 1 and agent.status == "idle", what="the notice")
        reports = [e["data"] for e in agent.session.events if e["type"] == "user/message"
                   and e["data"]["source"]["kind"] == "subagent-report"]
        assert [r["content"][0]["text"] for r in reports] == ["halfway there"]
        assert reports[0]["source"] == {"kind": "subagent-report", "form": "relay", "senderSessionId": child_id}
        await subagents.followup(agent, child_id, "again")
        await until(lambda: agents.get(child_id) is not None, what="the resumed child")
        assert agents.get(child_id).options["subagentDepth"] == 1 and agents.get(child_id).options["parent"] == agent.id
        await until(lambda: len(notices(agent)) == 2, what="the second notice")
