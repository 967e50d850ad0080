"""The scheduler through the whole loop: footprints cut parallel groups, results commit in call order,
an abort mid-group gives every call a result."""
import asyncio
import time

from tests.agents.loop_rows import agent_home
from tests.host.helpers import InProcess, run_async


def spans_recorder(host, seconds):
    spans = {}

    async def around(exec_, next_):
        start = time.monotonic()
        await asyncio.sleep(seconds)
        result = await next_()
        spans[exec_["callId"]] = (start, time.monotonic())
        return result
    host.root.on("tools/execute", around)
    return spans


def overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


@run_async()
async def test_writes_to_one_path_are_a_barrier_writes_to_others_run_together(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    calls = [{"id": "w1", "name": "write_file", "arguments": {"path": "a.txt", "content": "first"}},
             {"id": "w2", "name": "write_file", "arguments": {"path": "b.txt", "content": "b"}},
             {"id": "w3", "name": "write_file", "arguments": {"path": "a.txt", "content": "second"}},
             {"id": "r4", "name": "read_file", "arguments": {"path": "b.txt"}}]
    home = agent_home(tmp_path, [{"toolCalls": calls}, {"text": "ok"}], fs_root=str(work))
    async with InProcess(home) as host:
        spans = spans_recorder(host, 0.2)
        agent = await host.root.get("agents").open()
        agent.followup("write")
        await agent.when_idle()
        assert overlap(spans["w1"], spans["w2"])
        assert spans["w3"][0] >= spans["w1"][1]          # same path as w1: waits for it
        assert overlap(spans["w3"], spans["r4"])          # b.txt is no longer being written
        assert (work / "a.txt").read_text() == "second"
        order = [e["data"]["message"]["source"]["callId"] for e in agent.session.events if e["type"] == "tool/result"]
        assert order == ["w1", "w2", "w3", "r4"]


@run_async()
async def test_abort_mid_group_pairs_every_call_with_a_result(tmp_path):
    calls = [{"id": f"s{i}", "name": "sleep_par", "arguments": {"tag": f"t{i}", "ms": 5000}} for i in range(3)] + \
            [{"id": "x", "name": "sleep_ex", "arguments": {"tag": "x", "ms": 1}}]
    home = agent_home(tmp_path, [{"toolCalls": calls}], probe={})
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        agent.followup("sleep")
        while sum(1 for e in agent.session.events if e["type"] == "tool/call") < 3:
            await asyncio.sleep(0.01)
        agent.abort()
        await asyncio.wait_for(agent.when_idle(), 10)
        results = {e["data"]["message"]["source"]["callId"]: e["data"]["error"]["code"]
                   for e in agent.session.events if e["type"] == "tool/result"}
        assert results == {"s0": "TOOL_ABORTED", "s1": "TOOL_ABORTED", "s2": "TOOL_ABORTED",
                           "x": "TOOL_ABORTED_BEFORE_DISPATCH"}
        assert agent.session.events[-1]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
