"""The turn's abort signal (an asyncio.Event that calls listeners when set) and the guard that turns an
abort into a cancellation of the task waiting (the adapter's HTTP read): ours when the abort caused it,
theirs when someone else cancelled the task too; on a plain event, one watcher task."""
import asyncio

from dshctl.agents.abort import AbortGuard, AbortSignal
from tests.host.helpers import run_async


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


async def _guarded_wait(signal, armed: asyncio.Event) -> str:
    guard = AbortGuard(signal)
    guard.arm()
    guard.active = True
    armed.set()
    try:
        await asyncio.sleep(60)
        return "slept"
    except asyncio.CancelledError:
        if not guard.ours():
            raise
        await asyncio.sleep(0)          # the task is not left cancelled: it goes on
        return "aborted"
    finally:
        guard.active = False
        guard.close()


def test_an_abort_cancels_the_waiting_task_and_a_foreign_cancel_stands():
    for make in (AbortSignal, asyncio.Event):      # listener, or the watcher task of a plain event
        @run_async()
        async def go():
            signal, armed = make(), asyncio.Event()
            task = asyncio.ensure_future(_guarded_wait(signal, armed))
            await armed.wait()
            signal.set()
            assert await asyncio.wait_for(task, 5) == "aborted"
            signal, armed = make(), asyncio.Event()
            task = asyncio.ensure_future(_guarded_wait(signal, armed))
            await armed.wait()
            task.cancel()                  # someone else cancels (a disposed driver) …
            signal.set()                   # … and the abort comes too: the cancellation stands
            await asyncio.gather(task, return_exceptions=True)
            assert task.cancelled()
            assert not getattr(signal, "_listeners", [])
        go()


@run_async()
async def test_an_inactive_guard_ignores_the_abort():
    signal = AbortSignal()
    guard = AbortGuard(signal)
    guard.arm()
    signal.set()                           # not waiting now: nothing to cancel
    await asyncio.sleep(0)
    assert not guard.fired
    guard.close()


@run_async()
async def test_the_guard_on_a_plain_event_watches_with_one_task_and_stops_it():
    event = asyncio.Event()
    guard = AbortGuard(event)
    guard.arm()
    before = len(asyncio.all_tasks())
    guard.close()
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before - 1 and not guard.fired
