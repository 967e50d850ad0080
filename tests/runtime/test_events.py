"""Checklist item 75 and the rest of §5: emit, parallel, serial, bail, waterfall, listener scope."""
from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.runtime import AggregateError, Context, RuntimeOptions, RuntimeTimeout

from .helpers import run_async


@run_async
async def test_item_75_parallel_serial_bail_waterfall_semantics():
    root = Context()
    seq = []

    # parallel: every listener runs and is awaited; all failures come back in one aggregate.
    async def slow_ok():
        await asyncio.sleep(0.01)
        seq.append("slow")

    async def fail_async():
        raise ValueError("async failure")

    def fail_sync():
        raise KeyError("sync failure")

    for fn in (fail_sync, slow_ok, fail_async):
        root.on("par", fn)
    with pytest.raises(AggregateError) as info:
        await root.parallel("par")
    assert seq == ["slow"]
    assert isinstance(info.value, ExceptionGroup)
    assert sorted(type(e).__name__ for e in info.value.exceptions) == ["KeyError", "ValueError"]

    # serial / bail: the first result that is neither None nor False wins; 0 and '' count.
    for result in (None, False, 0, "late"):
        root.on("pick", lambda r=result: r)
    assert root.bail("pick") == 0 and root.bail("pick") is not False

    async def empty_string():
        return ""
    root.on("spick", lambda: None)
    root.on("spick", empty_string)
    root.on("spick", lambda: "never")
    assert await root.serial("spick") == ""
    assert await root.serial("nobody-listens") is None

    # waterfall: listeners get next(); the chain result is returned; skipping next() vetoes the rest.
    async def add_one(value, next):
        return await next() + 1

    def double(value, next):
        return next()

    root.on("chain", add_one)
    root.on("chain", double)
    assert await root.waterfall("chain", 5, default=lambda: 100) == 101
    root.on("chain", lambda value, next: value * 2, prepend=True)   # vetoes everything after it
    assert await root.waterfall("chain", 5, default=lambda: 100) == 10


@run_async
async def test_emit_is_sync_in_order_and_a_raising_listener_stops_the_rest():
    root = Context()
    seq = []
    root.on("e", lambda x: seq.append(("a", x)))
    root.on("e", lambda x: seq.append(("first", x)), prepend=True)
    root.emit("e", 1)
    assert seq == [("first", 1), ("a", 1)]
    root.on("e", lambda x: (_ for _ in ()).throw(RuntimeError("stop")), prepend=True)
    with pytest.raises(RuntimeError):
        root.emit("e", 2)
    assert seq == [("first", 1), ("a", 1)]


@run_async
async def test_once_listener_is_disposed_before_first_call():
    root = Context()
    calls = []
    handle = root.on("e", lambda: calls.append(handle.disposed), once=True)
    root.emit("e")
    root.emit("e")
    assert calls == [True]
    assert root.get_effects() == []


@run_async
async def test_scope_filters_listeners_but_global_ones_bypass_it():
    root = Context()
    seq = []

    def plugin(ctx, config):
        ctx.on("scoped", lambda: seq.append(config), global_=config == "global")

    a = await root.plugin(plugin, "a")
    await root.plugin(plugin, "b")
    await root.plugin(plugin, "global")
    root.emit("scoped", scope=lambda ctx: ctx.fiber is a)
    assert seq == ["a", "global"]


@run_async
async def test_waterfall_listener_that_never_calls_next_times_out_instead_of_hanging():
    root = Context(RuntimeOptions(waterfall_timeout=0.05))

    async def passes(next):
        return await next()

    async def stuck_listener(next):
        await asyncio.Event().wait()

    root.on("hang", passes)
    root.on("hang", stuck_listener)
    with pytest.raises(RuntimeTimeout, match=r'waterfall "hang": .*stuck_listener neither called next\(\) '
                                             r"nor returned within 0.05s"):
        await root.waterfall("hang", default=lambda: "done")
    assert isinstance(RuntimeTimeout("x"), TimeoutError)
    # a per-call timeout overrides the option
    with pytest.raises(RuntimeTimeout, match="within 0.01s"):
        await root.waterfall("hang", timeout=0.01)


@run_async
async def test_listener_registration_is_an_effect_undone_on_unload():
    root = Context()
    heard = []
    fiber = await root.plugin(lambda ctx: ctx.on("e", heard.append))
    root.emit("e", 1)
    await fiber.dispose()
    root.emit("e", 2)
    assert heard == [1]


RESULTS = st.one_of(st.none(), st.just(False), st.just(True), st.integers(-2, 2), st.sampled_from(["", "x"]))


@settings(max_examples=150, deadline=None)
@given(results=st.lists(RESULTS, max_size=6), asynchronous=st.lists(st.booleans(), min_size=6, max_size=6))
def test_serial_and_bail_return_first_result_neither_none_nor_false(results, asynchronous):
    expected = next((r for r in results if r is not None and r is not False), None)
    calls = []

    def listener(index, value):
        def sync():
            calls.append(index)
            return value

        async def later():
            calls.append(index)
            return value
        return later if asynchronous[index] else sync

    async def main():
        root = Context()
        for index, value in enumerate(results):
            root.on("pick", listener(index, value))
        got = await root.serial("pick")
        assert got is expected or (got == expected and type(got) is type(expected))
        # listeners after the winner never run
        stop = next((i for i, r in enumerate(results) if r is not None and r is not False), len(results) - 1)
        assert calls == list(range(stop + 1)) if results else calls == []

    asyncio.run(main())
    sync_root = Context()
    for value in results:
        sync_root.on("pick", lambda value=value: value)
    got = sync_root.bail("pick")
    assert got is expected or (got == expected and type(got) is type(expected))


@settings(max_examples=100, deadline=None)
@given(vetoes=st.lists(st.booleans(), max_size=6))
def test_waterfall_runs_until_the_first_listener_that_skips_next(vetoes):
    ran = []

    def make(index, veto):
        async def listener(next):
            ran.append(index)
            if veto:
                return f"veto {index}"
            return await next()
        return listener

    async def main():
        root = Context()
        for index, veto in enumerate(vetoes):
            root.on("chain", make(index, veto))
        return await root.waterfall("chain", default=lambda: "default")

    result = asyncio.run(main())
    first_veto = next((i for i, v in enumerate(vetoes) if v), None)
    if first_veto is None:
        assert result == "default" and ran == list(range(len(vetoes)))
    else:
        assert result == f"veto {first_veto}" and ran == list(range(first_veto + 1))


@run_async
async def test_waterfall_timeout_does_not_blame_a_slow_default_handler():
    root = Context(RuntimeOptions(waterfall_timeout=0.02))

    async def slow_default():
        await asyncio.sleep(0.08)
        return "restarted"

    async def passes(next):
        return await next()

    root.on("slow", passes)
    assert await root.waterfall("slow", default=slow_default) == "restarted"
