"""The tool pipeline: every kind of bad model input becomes an error result, plugins hook in through
the event bus (and unhook on unload), time limits and aborts end calls without hanging."""
import asyncio

import pytest

from dshctl.agents.tools.definition import Tool
from dshctl.agents.tools.pipeline import dispatch
from tests.agents.loop_helpers import BareAgent, call, runtime_with_tools
from tests.host.helpers import run_async

SCHEMA = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}},
          "additionalProperties": False}


def setup(**tools):
    ctx, registry = runtime_with_tools()
    for name, tool in tools.items():
        registry.register(ctx, name, tool)
    return ctx, registry, BareAgent(ctx, registry)


def double(args, run):
    return {"content": [{"type": "text", "text": str(args["n"] * 2)}]}


def text_of(result):
    return result["content"][0]["text"]


@run_async()
async def test_a_valid_call_runs_the_body():
    ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))
    result = await dispatch(agent, call("double", {"n": 21}), turn=1, step=1)
    assert text_of(result) == "42" and not result.get("isError")


@pytest.mark.parametrize("arguments, code, fragment", [
    ("{not json", "TOOL_ARGUMENTS_JSON", "not valid JSON"),
    ('{"n": "two"}', "TOOL_ARGUMENTS_SCHEMA", "$.n: 'two' is not of type 'integer'"),
    ('{"n": 1, "extra": true}', "TOOL_ARGUMENTS_SCHEMA", "Additional properties"),
    ("", "TOOL_ARGUMENTS_SCHEMA", "'n' is a required property"),
])
def test_bad_arguments_become_error_results(arguments, code, fragment):
    @run_async()
    async def go():
        ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))
        result = await dispatch(agent, {"id": "c", "name": "double", "arguments": arguments}, turn=1, step=1)
        assert result["isError"] and result["error"]["code"] == code
        assert fragment in text_of(result)
    go()


@run_async()
async def test_unknown_and_restricted_names():
    ctx, registry, agent = setup(double=Tool("double", "x2", double, SCHEMA))
    result = await dispatch(agent, call("triple", {"n": 1}), turn=1, step=1)
    assert result["error"]["code"] == "TOOL_UNKNOWN" and "available: double" in text_of(result)
    registry.scope(ctx, "preset:p", "global", deny=["double"])
    hidden = BareAgent(ctx, registry, "preset:p")
    result = await dispatch(hidden, call("double", {"n": 1}), turn=1, step=1)
    assert result["error"]["code"] == "TOOL_RESTRICTED"


@run_async()
async def test_a_raising_tool_and_a_slow_tool():
    def explode(args, run):
        raise KeyError("missing")

    async def slow(args, run):
        await asyncio.sleep(30)

    ctx, _, agent = setup(boom=Tool("boom", "", explode), slow=Tool("slow", "", slow, timeout_ms=50))
    result = await dispatch(agent, call("boom", {}), turn=1, step=1)
    assert result["error"]["code"] == "TOOL_FAILED" and "KeyError" in text_of(result)
    result = await asyncio.wait_for(dispatch(agent, call("slow", {}), turn=1, step=1), 5)
    assert result["error"]["code"] == "TOOL_TIMEOUT" and "50 ms" in text_of(result)


@run_async()
async def test_abort_stops_a_running_body():
    started = asyncio.Event()

    async def forever(args, run):
        started.set()
        await asyncio.sleep(60)

    ctx, _, agent = setup(wait=Tool("wait", "", forever))
    task = asyncio.ensure_future(dispatch(agent, call("wait", {}), turn=1, step=1))
    await started.wait()
    agent.abort_event.set()
    result = await asyncio.wait_for(task, 5)
    assert result["error"]["code"] == "TOOL_ABORTED"


@run_async()
async def test_pre_execute_denies_and_unhooks_with_its_fiber():
    from dshctl.runtime import InlinePlugin
    ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))

    def gate(c):
        async def deny(exec_, next_):
            if exec_["arguments"].get("n") == 13:
                return {"kind": "deny", "reason": "unlucky"}
            return await next_()
        c.on("tools/pre-execute", deny)
    fiber = ctx.plugin(InlinePlugin(apply=gate))
    await fiber
    denied = await dispatch(agent, call("double", {"n": 13}), turn=1, step=1)
    assert denied["error"]["code"] == "TOOL_DENIED" and "unlucky" in text_of(denied)
    assert text_of(await dispatch(agent, call("double", {"n": 2}), turn=1, step=1)) == "4"
    await fiber.dispose()
    assert text_of(await dispatch(agent, call("double", {"n": 13}), turn=1, step=1)) == "26"


@run_async()
async def test_execute_wraps_and_post_execute_blocks():
    ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))
    seen = []

    async def around(exec_, next_):
        seen.append(exec_["name"])
        return await next_()

    async def block(exec_, result, next_):
        if text_of(result) == "8":
            return {"kind": "block", "feedback": [{"type": "text", "text": "eight is not allowed"}]}
        return await next_()
    ctx.on("tools/execute", around)
    ctx.on("tools/post-execute", block)
    assert text_of(await dispatch(agent, call("double", {"n": 1}), turn=1, step=1)) == "2"
    blocked = await dispatch(agent, call("double", {"n": 4}), turn=1, step=1)
    assert blocked["isError"] and text_of(blocked) == "eight is not allowed" and seen == ["double", "double"]


@run_async()
async def test_failing_listener_is_an_error_result_not_a_crash():
    ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))

    def broken(exec_, next_):
        raise RuntimeError("gate bug")
    ctx.on("tools/pre-execute", broken)
    result = await dispatch(agent, call("double", {"n": 1}), turn=1, step=1)
    assert result["error"]["code"] == "TOOL_GATE_FAILED" and "gate bug" in text_of(result)


@run_async()
async def test_repeat_guard_refuses_the_fourth_identical_call():
    ctx, _, agent = setup(double=Tool("double", "x2", double, SCHEMA))
    results = [await dispatch(agent, call("double", {"n": 3}), turn=1, step=i) for i in range(4)]
    assert [r.get("isError", False) for r in results] == [False, False, False, True]
    assert results[3]["error"]["code"] == "TOOL_REPEATED"
    assert not (await dispatch(agent, call("double", {"n": 4}), turn=1, step=5)).get("isError")


@run_async()
async def test_dict_definitions_and_plain_return_values():
    ctx, _, agent = setup(echo={"description": "echo", "execute": lambda args, run: {"got": args}},
                          hello={"description": "", "execute": lambda args, run: "hi " + run.origin})
    assert text_of(await dispatch(agent, call("echo", {"a": 1}), turn=1, step=1)) == '{"got": {"a": 1}}'
    assert text_of(await dispatch(agent, call("hello", {}), turn=1, step=1, origin="code")) == "hi code"
