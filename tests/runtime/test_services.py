"""Checklist items 27-30: services, access rules and realms (cordis-runtime.md §3-§4)."""
from __future__ import annotations

import asyncio

import pytest

from dshctl.runtime import Context, CordisError, ServiceAccessError, State

from .helpers import run_async, ticks


@run_async
async def test_item_27_access_errors_for_undeclared_and_inactive_services():
    root = Context()
    seen = {}

    def plugin(ctx):
        seen["ctx"] = ctx
        with pytest.raises(ServiceAccessError, match=r'^cannot get property "bar" without inject$'):
            ctx.bar
        seen["foo"] = ctx.foo

    withdraw = root.provide("foo", "value")
    await root.plugin(lambda ctx: ctx.provide("bar", "sibling's"))   # exists, but not injected
    fiber = await root.inject(["foo"], plugin)
    assert seen["foo"] == "value" and fiber.ctx["foo"] == "value"
    assert not hasattr(fiber.ctx, "undeclared")  # access errors are AttributeErrors too
    await withdraw()
    assert fiber.state is State.PENDING
    with pytest.raises(ServiceAccessError,
                       match=r'^cannot get required service "foo" in inactive context$'):
        seen["ctx"].foo
    assert seen["ctx"].get("foo") is None


@run_async
async def test_services_of_ancestor_fibers_are_in_scope_without_inject():
    # A service provided by an ancestor fiber (here the root) is in scope for its descendants.
    root = Context()
    root.provide("config", {"debug": True})
    fiber = await root.plugin(lambda ctx: None)
    assert fiber.ctx.config == {"debug": True}


@run_async
async def test_item_28_second_provide_in_same_realm_raises():
    root = Context()

    def provider(ctx):
        ctx.provide("foo", 1)

    await root.plugin(provider)
    with pytest.raises(CordisError, match=r'^service "foo" has been registered at <provider>$'):
        root.provide("foo", 2)
    assert root.get("foo") == 1
    root.isolate("foo").provide("foo", 3)   # another realm is fine
    with pytest.raises(CordisError, match=r'property "plugin" is already declared as method'):
        root.provide("plugin", 1)


@run_async
async def test_item_29_isolated_and_labelled_realms():
    root = Context()
    applies = {"a": 0, "b": 0, "plain": 0}

    def counter(key):
        def apply(ctx):
            applies[key] += 1
            return None
        return apply

    alpha = root.isolate("foo", "shared")
    beta = root.isolate("foo", "shared")
    local = root.isolate("foo")
    fa = alpha.inject(["foo"], counter("a"))
    fb = beta.inject(["foo"], counter("b"))
    plain = root.inject(["foo"], counter("plain"))
    withdraw = alpha.provide("foo", "shared-value")
    await ticks(10)
    assert fa.state is State.ACTIVE and fb.state is State.ACTIVE and plain.state is State.PENDING
    assert fb.ctx.foo == "shared-value"
    assert local.get("foo") is None and root.get("foo") is None
    local.provide("foo", "local-value")      # an independent binding: restarts nobody
    root.provide("foo", "root-value")
    await ticks(10)
    assert applies == {"a": 1, "b": 1, "plain": 1}
    await withdraw()                         # withdrawing the shared realm hits exactly its dependents
    assert fa.state is State.PENDING and fb.state is State.PENDING and plain.state is State.ACTIVE
    beta.provide("foo", "again")
    await ticks(10)
    assert applies == {"a": 2, "b": 2, "plain": 1}


@run_async
async def test_item_30_provider_teardown_waits_for_dependents_before_dropping_own_binding():
    root = Context()
    seq = []
    release = asyncio.Event()

    def provider(ctx):
        ctx.provide("foo", "v")
        seq.append("provider up")
        return lambda: seq.append(f"provider still reads {ctx.foo}")

    def dependent(ctx):
        async def slow_teardown():
            await release.wait()
            seq.append("dependent down")
        return slow_teardown

    pfiber = await root.plugin(provider)
    dfiber = await root.inject(["foo"], dependent)
    disposing = pfiber.dispose()
    await ticks(10)
    assert dfiber.state is State.UNLOADING and pfiber.state is State.UNLOADING
    assert pfiber.ctx.foo == "v"        # still readable while the dependent tears down
    release.set()
    await disposing
    assert seq == ["provider up", "provider still reads v", "dependent down"]
    with pytest.raises(ServiceAccessError):
        pfiber.ctx.foo
    assert dfiber.state is State.PENDING and pfiber.state is State.DISPOSED
