"""@dshctl/loop-guard on the loop: each limit from its row's config, each stop says the way out."""
from tests.agents.loop_rows import agent_home
from tests.host.helpers import InProcess, run_async


async def run(tmp_path, replies, guard):
    home = agent_home(tmp_path, replies, probe={}, guard=guard)
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("work")
        await agent.when_idle()
        steps = sum(1 for e in agent.session.events if e["type"] == "step/start")
        reason = agent.session.events[-1]["data"]["reason"]
        agent.followup("a new instruction")             # the way out: a fresh turn with fresh limits
        await agent.when_idle()
        return steps, reason, agent.session.events[-1]["data"]["reason"]


def sleep_call(tag):
    return {"toolCalls": [{"name": "sleep_par", "arguments": {"tag": tag, "ms": 1}}]}


@run_async()
async def test_round_limit(tmp_path):
    steps, reason, after = await run(tmp_path, [sleep_call(f"t{i}") for i in range(10)] + [{"text": "fine"}] * 3,
                                     {"maxRounds": 3})
    assert steps == 3 and reason["kind"] == "aborted" and reason["reason"]["kind"] == "hook"
    assert "round limit of 3 steps reached" in reason["reason"]["reason"]
    assert "send a new instruction to continue" in reason["reason"]["reason"]
    assert after["kind"] in ("completed", "aborted")


@run_async()
async def test_no_progress_for_two_steps(tmp_path):
    same = {"toolCalls": [{"name": "echo", "arguments": {"text": "same"}}]}
    steps, reason, after = await run(tmp_path, [same] * 6 + [{"text": "ok"}] * 2,
                                     {"noProgressSteps": 2})
    assert steps == 3 and "2 steps in a row made no progress" in reason["reason"]["reason"]


@run_async()
async def test_breaker_on_the_same_error_twice(tmp_path):
    bad = {"toolCalls": [{"name": "no_such_tool", "arguments": {}}]}
    ok = sleep_call("fine")
    steps, reason, after = await run(tmp_path, [bad, ok, bad, ok, ok, {"text": "done"}], {"sameErrorLimit": 2})
    assert steps == 3 and "the same tool error came back 2 times" in reason["reason"]["reason"]
    assert 'unknown tool "no_such_tool"' in reason["reason"]["reason"]


@run_async()
async def test_a_closing_turn_is_left_alone(tmp_path):
    steps, reason, after = await run(tmp_path, [{"text": "hello"}, {"text": "again"}], {"maxRounds": 1})
    assert steps == 1 and reason == {"kind": "completed"} and after == {"kind": "completed"}
