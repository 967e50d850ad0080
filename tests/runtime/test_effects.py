"""Checklist items 1-11: effects (cordis-runtime.md §2)."""
from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.runtime import INACTIVE_EFFECT, Context, CordisError, State

from .helpers import run_async, runtime_errors, ticks


@run_async
async def test_item_1_dispose_handle_runs_cleanup_exactly_once():
    root = Context()
    calls = []
    dispose = root.effect(lambda: lambda: calls.append("cleanup"))
    assert calls == []
    dispose()
    assert calls == ["cleanup"]
    dispose()
    await dispose()
    assert calls == ["cleanup"]
    assert root.get_effects() == []


@run_async
async def test_item_2_generator_effect_collects_yields_and_runs_them_lifo():
    root = Context()
    seq = []

    def setup():
        yield lambda: seq.append(1)
        yield lambda: seq.append(2)
        return lambda: seq.append(3)

    dispose = root.effect(setup)
    assert seq == []
    dispose()
    assert seq == [3, 2, 1]
    dispose()
    assert seq == [3, 2, 1]

    # A yielded nested effect becomes a child and leaves the top-level list.
    def outer():
        yield root.effect(lambda: lambda: seq.append("inner"), "inner")
        yield lambda: seq.append("outer")

    handle = root.effect(outer, "outer")
    assert root.get_effects() == [{"label": "outer", "children": [{"label": "inner", "children": []}]}]
    handle()
    assert seq[-2:] == ["outer", "inner"]
    assert root.get_effects() == []


@run_async
async def test_item_3_sync_setup_error_rolls_back_collected_and_reraises():
    root = Context()
    seq = []

    def failing_generator():
        yield lambda: seq.append(1)
        raise ValueError("test")
        yield lambda: seq.append(2)  # pragma: no cover

    with pytest.raises(ValueError, match="test"):
        root.effect(failing_generator)
    assert seq == [1]

    def failing_return():
        raise ValueError("return with error")

    with pytest.raises(ValueError):
        root.effect(failing_return)
    assert seq == [1]
    assert root.get_effects() == []


@run_async
async def test_item_4_disposing_async_effect_waits_for_setup_then_cleans_up():
    root = Context()
    seq = []
    release = asyncio.Event()

    async def setup():
        await release.wait()
        seq.append(1)
        return lambda: seq.append(2)

    dispose = root.effect(setup)
    waiting = dispose()
    await ticks()
    assert seq == []
    release.set()
    await waiting
    assert seq == [1, 2]


@run_async
async def test_item_5_async_iterator_disposed_mid_iteration_finishes_step_in_flight():
    root = Context()
    seq = []
    first, second = asyncio.Event(), asyncio.Event()

    async def steps():
        seq.append(1)
        yield lambda: seq.append(2)
        await first.wait()
        seq.append(3)
        yield lambda: seq.append(4)
        seq.append(5)  # never reached: no new step after disposal
        yield lambda: seq.append(6)

    dispose = root.effect(steps)
    await ticks()
    waiting = dispose()          # the second step is in flight
    first.set()
    await waiting
    assert seq == [1, 3, 4, 2]

    # Disposed before the first step lands: that step still completes and is cleaned up.
    seq.clear()

    async def slow_first():
        await second.wait()
        seq.append(1)
        yield lambda: seq.append(2)
        seq.append(3)  # pragma: no cover
        yield lambda: seq.append(4)  # pragma: no cover

    dispose = root.effect(slow_first)
    waiting = dispose()
    second.set()
    await waiting
    assert seq == [1, 2]


@run_async
async def test_item_6_awaiting_handle_waits_for_setup_and_raises_setup_error():
    root = Context()
    release = asyncio.Event()
    seq = []

    async def steps():
        await release.wait()
        yield lambda: seq.append("a")
        yield lambda: seq.append("b")

    handle = root.effect(steps)
    assert handle.pending
    release.set()
    dispose = await handle
    assert dispose is handle and not handle.pending
    assert seq == []
    await dispose()
    assert seq == ["b", "a"]

    async def broken():
        await asyncio.sleep(0)
        raise RuntimeError("async return with error")

    failing = root.effect(broken)
    with pytest.raises(RuntimeError, match="async return with error"):
        await failing


@run_async
async def test_item_7_async_setup_failure_rolls_back_and_is_logged_not_raised(caplog):
    root = Context()
    seq = []

    async def steps():
        yield lambda: seq.append(1)
        yield lambda: seq.append(2)
        raise RuntimeError("late failure")

    handle = root.effect(steps)          # no exception reaches the caller
    await ticks(10)
    assert seq == [2, 1]
    errors = runtime_errors(caplog)
    assert len(errors) == 1 and "late failure" in str(errors[0].exc_info[1])
    assert root.get_effects() == []
    handle()                            # already rolled back: nothing runs twice
    assert seq == [2, 1]


@pytest.mark.parametrize("result", [42, "text", {"a": 1}, object()])
def test_item_8_invalid_effect_result_raises_type_error(result):
    async def main():
        root = Context()
        with pytest.raises(TypeError, match="Invalid effect"):
            root.effect(lambda: result)
        with pytest.raises(TypeError, match="Invalid effect"):
            root.effect(lambda: iter([lambda: None, result]))
        assert root.get_effects() == []
    asyncio.run(main())


@run_async
async def test_item_9_effect_on_disposed_fiber_raises_inactive_effect():
    root = Context()
    holder = {}

    def plugin(ctx):
        holder["ctx"] = ctx

    fiber = await root.plugin(plugin)
    await fiber.dispose()
    ctx = holder["ctx"]
    for attempt in (lambda: ctx.effect(lambda: None), lambda: ctx.on("x", print),
                    lambda: ctx.plugin(plugin), lambda: ctx.provide("svc", 1)):
        with pytest.raises(CordisError, match="cannot create effect on inactive context") as info:
            attempt()
        assert info.value.code == INACTIVE_EFFECT


@run_async
async def test_item_10_effect_while_unloading_raises_but_pending_and_loading_allowed():
    root = Context()
    seen = {}
    release = asyncio.Event()

    def plugin(ctx):
        seen["loading_ok"] = ctx.fiber.state is State.LOADING and ctx.effect(lambda: None) is not None

        async def slow_cleanup():
            await release.wait()
        return slow_cleanup

    fiber = await root.plugin(plugin)
    assert seen["loading_ok"]
    waiting = fiber.restart()
    await ticks()
    assert fiber.state is State.UNLOADING
    with pytest.raises(CordisError) as info:
        fiber.ctx.effect(lambda: None)
    assert info.value.code == INACTIVE_EFFECT
    release.set()
    await waiting
    assert fiber.state is State.ACTIVE

    # PENDING (unmet inject) allows effects; they are undone when the fiber is disposed.
    pending = root.inject(["missing"], lambda ctx: None)
    cleaned = []
    pending.ctx.effect(lambda: lambda: cleaned.append(True))
    assert pending.state is State.PENDING
    await pending.dispose()
    assert cleaned == [True] and pending.state is State.DISPOSED


@run_async
async def test_item_11_get_effects_returns_label_tree():
    root = Context()

    def plugin(ctx):
        ctx.effect(lambda: None)
        ctx.on("greet", print)
        ctx.provide("svc", 1)
        ctx.effect(lambda: ctx.on("nested", print), "holder")
        ctx.plugin(lambda child: None)

    fiber = await root.plugin(plugin)
    assert fiber.get_effects() == [
        {"label": "anonymous", "children": []},
        {"label": 'ctx.on("greet")', "children": []},
        {"label": 'ctx.provide("svc")', "children": []},
        {"label": "holder", "children": [{"label": 'ctx.on("nested")', "children": []}]},
        {"label": "ctx.plugin()", "children": []},
    ]
    assert root.get_effects() == [{"label": "ctx.plugin()", "children": []}]


# A random effect tree: each node is an effect whose setup yields its children's handles and
# plain disposers, in order. Disposing the root handle must undo every disposer exactly once, each
# node's collected disposers newest first (children included, recursively).
TREE = st.recursive(st.integers(0, 3).map(lambda n: ("leaf", n)),
                    lambda kids: st.lists(st.one_of(kids, st.integers(0, 2).map(lambda n: ("leaf", n))),
                                          max_size=3).map(lambda ks: ("node", ks)),
                    max_leaves=12)


def _expected_and_build(root_ctx, tree, log, path="r"):
    """Build the effect for ``tree``; return (handle, the disposal order the semantics predict)."""
    kind, payload = tree
    items, orders = [], []
    if kind == "leaf":
        for i in range(payload):
            items.append(lambda tag=f"{path}.{i}": log.append(tag))
            orders.append([f"{path}.{i}"])
    else:
        for i, child in enumerate(payload):
            handle, order = _expected_and_build(root_ctx, child, log, f"{path}.{i}")
            items.append(handle)
            orders.append(order)

    def setup():
        yield from items
    handle = root_ctx.effect(setup, path)
    return handle, [tag for order in reversed(orders) for tag in order]


@settings(max_examples=150, deadline=None)
@given(tree=TREE)
def test_nested_effect_trees_dispose_lifo_exactly_once(tree):
    async def main():
        root = Context()
        log = []
        handle, expected = _expected_and_build(root, tree, log)
        assert [e["label"] for e in root.get_effects()] == ["r"]   # children left the top level
        await handle()
        await handle()
        assert log == expected
        assert root.get_effects() == []
    asyncio.run(main())
