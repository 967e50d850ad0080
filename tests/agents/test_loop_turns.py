"""The turn flow on the scripted model, in a host booted in this process (the process-level stories are
in test_loop_host.py): event order, tool scheduling, turn-end reasons, inbox semantics, plugin hooks."""
import asyncio

from dshctl.agents.session.history import derive_history
from tests.agents.loop_rows import agent_home, types, without_chunks
from tests.host.helpers import InProcess, run_async, write


async def one_turn(host, prompt, session=None, **open_kw):
    agents = host.root.get("agents")
    agent = await agents.open(session, **open_kw)
    agent.followup(prompt)
    await agent.when_idle()
    return agent


def turn_end(agent, n=-1):
    return [e["data"]["reason"] for e in agent.session.events if e["type"] == "turn/end"][n]


@run_async()
async def test_event_order_of_a_turn_with_one_tool_call(tmp_path):
    work = tmp_path / "work"
    write(work / "notes.txt", "alpha\nbeta\n")
    replies = [{"text": "Reading.", "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
               {"text": "It says alpha, beta."}]
    home = agent_home(tmp_path, replies, fs_root=str(work))
    async with InProcess(home) as host:
        agent = await one_turn(host, "what is in notes.txt?")
        assert without_chunks(agent.session.events) == [
            "agent-preset/selected"] * (without_chunks(agent.session.events)[0] == "agent-preset/selected") + [
            "turn/start", "step/start", "user/message", "request/header", "assistant/message",
            "tool/call", "tool/result", "step/end",
            "step/start", "assistant/message", "step/end", "turn/end"]
        result = next(e for e in agent.session.events if e["type"] == "tool/result")
        assert result["data"]["message"]["content"][0]["content"][0]["text"] == "alpha\nbeta\n"
        assert turn_end(agent) == {"kind": "completed"}
        assert "assistant/chunk" in types(agent.session.events)


@run_async()
async def test_every_request_is_rebuilt_from_the_log_alone(tmp_path):
    replies = [{"toolCalls": [{"name": "sleep_par", "arguments": {"tag": "a", "ms": 1}}]},
               {"text": "first done"}, {"text": "second"}]
    home = agent_home(tmp_path, replies, probe={}, loop={"system": "Be brief."})
    async with InProcess(home) as host:
        agent = await one_turn(host, "go")
        agent.followup("again")
        await agent.when_idle()
        sent = host.root.get("llm").requests
        events = agent.session.events
        starts = [i for i, e in enumerate(events) if e["type"] == "assistant/chunk"
                  and (i == 0 or events[i - 1]["type"] != "assistant/chunk")]
        assert len(starts) == len(sent) == 3
        for request, start in zip(sent, starts):
            prefix = events[:start]
            header = [e for e in prefix if e["type"] == "request/header"][-1]["data"]["header"]
            assert request.messages == derive_history(prefix)
            assert request.system == header.get("system") == "Be brief."
            assert request.tools == header.get("tools")
            assert (request.provider, request.model) == (header["config"]["provider"], header["config"]["model"])


@run_async()
async def test_parallel_calls_overlap_and_exclusive_calls_do_not(tmp_path):
    calls = [{"name": "sleep_par", "arguments": {"tag": "p1", "ms": 300}},
             {"name": "sleep_par", "arguments": {"tag": "p2", "ms": 300}},
             {"name": "sleep_ex", "arguments": {"tag": "x", "ms": 100}},
             {"name": "sleep_par", "arguments": {"tag": "p3", "ms": 100}}]
    home = agent_home(tmp_path, [{"toolCalls": calls}, {"text": "ok"}], probe={})
    async with InProcess(home) as host:
        agent = await one_turn(host, "sleep")
        spans = host.root.get("probe")
        (a0, a1), (b0, b1), (x0, x1), (c0, c1) = (spans[t] for t in ("p1", "p2", "x", "p3"))
        assert a0 < b1 and b0 < a1                       # p1 and p2 overlapped
        assert x0 >= max(a1, b1) and c0 >= x1            # the exclusive call is a barrier both ways
        results = [e["data"]["message"]["source"]["callId"] for e in agent.session.events
                   if e["type"] == "tool/result"]
        calls_logged = [e["data"]["callId"] for e in agent.session.events if e["type"] == "tool/call"]
        assert results == calls_logged                   # committed in the model's order


@run_async()
async def test_max_tokens_is_sticky_for_the_turn(tmp_path):
    replies = [{"text": "cut", "finish": "length"}, {"text": "complete"}]
    home = agent_home(tmp_path, replies, probe={})
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agent = await agents.open()
        agent.followup("long answer please")

        def steer_once(payload):
            if payload["step"] == 1:
                payload["agent"].steer("continue")
        host.root.on("agent/turn-stopping", steer_once)
        await agent.when_idle()
        steps = [e for e in agent.session.events if e["type"] == "step/start"]
        assert len(steps) == 2                           # the steer ran a second, completed step
        assert turn_end(agent) == {"kind": "max-tokens"}


@run_async()
async def test_abort_mid_stream_keeps_the_delivered_text(tmp_path):
    home = agent_home(tmp_path, [{"text": "a rather long answer " * 20, "delayMs": 3000}])
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("talk")
        while not any(e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta"
                      for e in agent.session.events):
            await asyncio.sleep(0.01)
        agent.abort()
        await asyncio.wait_for(agent.when_idle(), 5)
        assert turn_end(agent) == {"kind": "aborted", "reason": {"kind": "user"}}
        message = [e for e in agent.session.events if e["type"] == "assistant/message"][-1]
        assert message["data"]["interrupted"] is True and message["data"]["message"]["content"][0]["text"]


@run_async()
async def test_steer_reaches_the_model_before_queued_followups(tmp_path):
    home = agent_home(tmp_path, [{"text": "one", "delayMs": 300}, {"text": "two"}, {"text": "three"}])
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("first")
        await asyncio.sleep(0.05)
        agent.followup("queued follow-up")
        agent.steer("steering")
        await agent.when_idle()
        users = [e["data"]["content"][0]["text"] for e in agent.session.events if e["type"] == "user/message"]
        assert users == ["first", "steering", "queued follow-up"]
        turn_of = {}
        turn = 0
        for e in agent.session.events:
            if e["type"] == "turn/start":
                turn = e["data"]["turn"]
            if e["type"] == "user/message":
                turn_of[e["data"]["content"][0]["text"]] = turn
        assert turn_of == {"first": 1, "steering": 1, "queued follow-up": 2}


@run_async()
async def test_a_plugin_rejecting_in_pre_step_closes_a_zero_step_turn(tmp_path):
    home = agent_home(tmp_path, [{"text": "never"}], probe={"reject": "forbidden"})
    async with InProcess(home) as host:
        agent = await one_turn(host, "a forbidden wish")
        assert without_chunks(agent.session.events)[-2:] == ["turn/start", "turn/end"]
        assert turn_end(agent) == {"kind": "blocked"}
        assert host.root.get("llm").requests == []
        agent.followup("a fine wish")
        await agent.when_idle()
        assert turn_end(agent) == {"kind": "completed"}


@run_async()
async def test_a_plugin_stops_a_turn_in_turn_stopping(tmp_path):
    loop_call = {"toolCalls": [{"name": "sleep_par", "arguments": {"tag": "t", "ms": 1}}]}
    home = agent_home(tmp_path, [loop_call] * 5, probe={"stopAfterStep": 2})
    async with InProcess(home) as host:
        agent = await one_turn(host, "loop")
        assert sum(1 for e in agent.session.events if e["type"] == "step/start") == 2
        assert turn_end(agent) == {"kind": "aborted", "reason": {"kind": "hook", "reason": "probe stops at step 2"}}


@run_async()
async def test_concludes_turn_ends_the_turn_at_its_step(tmp_path):
    home = agent_home(tmp_path, [{"toolCalls": [{"name": "finish", "arguments": {}}]}, {"text": "unused"}],
                      probe={})
    async with InProcess(home) as host:
        agent = await one_turn(host, "finish")
        assert sum(1 for e in agent.session.events if e["type"] == "step/start") == 1
        assert turn_end(agent) == {"kind": "completed"} and len(host.root.get("llm").requests) == 1


@run_async()
async def test_bad_model_output_never_crashes_a_turn(tmp_path):
    replies = [{"toolCalls": [{"name": "sleep_par", "arguments": "{oops"},
                              {"name": "no_such_tool", "arguments": {}},
                              {"name": "sleep_par", "arguments": {"ms": "slow"}}]},
               {"text": "recovered"}]
    home = agent_home(tmp_path, replies, probe={})
    async with InProcess(home) as host:
        agent = await one_turn(host, "try")
        codes = [e["data"]["error"]["code"] for e in agent.session.events if e["type"] == "tool/result"]
        assert codes == ["TOOL_ARGUMENTS_JSON", "TOOL_UNKNOWN", "TOOL_ARGUMENTS_SCHEMA"]
        assert turn_end(agent) == {"kind": "completed"}
        last = [e for e in agent.session.events if e["type"] == "assistant/message"][-1]
        assert last["data"]["message"]["content"][0]["text"] == "recovered"


@run_async()
async def test_an_empty_stream_ends_the_turn_with_an_error(tmp_path):
    home = agent_home(tmp_path, [])
    async with InProcess(home) as host:
        async def empty(options, next_):
            async def nothing():
                return
                yield
            return nothing()
        host.root.on("llm/stream", empty)
        agent = await one_turn(host, "hello?")
        reason = turn_end(agent)
        assert reason["kind"] == "error" and reason["error"]["code"] == "STREAM_TRUNCATED"
