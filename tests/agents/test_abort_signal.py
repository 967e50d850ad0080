"""The turn's abort signal (an asyncio.Event that calls listeners when set) and the tool bodies it
stops in the caller's task: aborted, swallowed, failing, cancelled by someone else — each as the
guarded path (a body task and a watcher task) reports it."""
import asyncio

from dshctl.agents.abort import AbortGuard, AbortSignal
from dshctl.agents.tools.definition import Tool
from dshctl.agents.tools.pipeline import dispatch
from tests.agents.loop_helpers import BareAgent, call, runtime_with_tools
from tests.host.helpers import run_async


def agent_with(signal, **tools):
    ctx, registry = runtime_with_tools()
    for name, tool in tools.items():
        registry.register(ctx, name, tool)
    agent = BareAgent(ctx, registry)
    agent.abort_event = signal
    return agent


@run_async()
async def test_the_signal_is_an_event_that_calls_its_listeners_once():
    signal, seen = AbortSignal(), []
    stop_a = signal.listen(lambda: seen.append("a"))
    signal.listen(lambda: seen.append("b"))
    stop_a()
    waiter = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    signal.set()
    signal.set()
    assert await asyncio.wait_for(waiter, 5) is True and signal.is_set() and seen == ["b"]


def _bodies(started: asyncio.Event, cleaned: list):
    async def forever(args, run):
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.append("forever")

    async def stubborn(args, run):      # swallows the cancellation and answers anyway
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cleaned.append("stubborn")
        return "done anyway"

    async def broken(args, run):
        await asyncio.sleep(0)
        raise ValueError("bad state")

    return {"forever": Tool("forever", "", forever), "stubborn": Tool("stubborn", "", stubborn),
            "broken": Tool("broken", "", broken)}


async def _outcomes(signal_type) -> list:
    out = []
    for name in ("forever", "stubborn"):
        started, cleaned = asyncio.Event(), []
        agent = agent_with(signal_type(), **_bodies(started, cleaned))
        task = asyncio.ensure_future(dispatch(agent, call(name, {}), turn=1, step=1))
        await started.wait()
        agent.abort_event.set()
        result = await asyncio.wait_for(task, 5)
        await asyncio.sleep(0.01)       # let a body task of the guarded path finish its clean-up
        out.append((result["error"]["code"], result["content"][0]["text"], cleaned))
    agent = agent_with(signal_type(), **_bodies(asyncio.Event(), []))
    result = await dispatch(agent, call("broken", {}), turn=1, step=1)
    out.append((result["error"]["code"], result["content"][0]["text"]))
    return out


@run_async()
async def test_a_body_in_the_callers_task_ends_as_in_its_own_task():
    inline = await _outcomes(AbortSignal)       # the agent's signal: the body runs in the caller's task
    guarded = await _outcomes(asyncio.Event)    # a plain event: a body task and a watcher task
    assert inline == guarded
    assert inline[0] == ("TOOL_ABORTED", 'Error: tool "forever" aborted', ["forever"])
    assert inline[1][0] == "TOOL_ABORTED" and inline[1][2] == ["stubborn"]
    assert inline[2] == ("TOOL_FAILED", 'Error: tool "broken" failed: ValueError: bad state')


@run_async()
async def test_the_caller_goes_on_after_an_aborted_body_and_a_foreign_cancel_stands():
    started, cleaned = asyncio.Event(), []
    agent = agent_with(AbortSignal(), **_bodies(started, cleaned))

    async def caller():
        result = await dispatch(agent, call("forever", {}), turn=1, step=1)
        await asyncio.sleep(0.01)       # the caller's task is not left cancelled
        return result["error"]["code"]

    task = asyncio.ensure_future(caller())
    await started.wait()
    agent.abort_event.set()
    assert await asyncio.wait_for(task, 5) == "TOOL_ABORTED"

    started.clear()
    agent = agent_with(AbortSignal(), **_bodies(started, cleaned))
    task = asyncio.ensure_future(dispatch(agent, call("forever", {}), turn=1, step=1))
    await started.wait()
    task.cancel()                      # someone else cancels (a disposed driver): not an aborted call
    agent.abort_event.set()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and not agent.abort_event._listeners


@run_async()
async def test_the_guard_on_a_plain_event_watches_with_one_task_and_stops_it():
    event = asyncio.Event()
    guard = AbortGuard(event)
    guard.arm()
    before = len(asyncio.all_tasks())
    guard.close()
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before - 1 and not guard.fired
