"""Checklist items 12-26: the fiber lifecycle (cordis-runtime.md §1)."""
from __future__ import annotations

import asyncio

import pytest

from dshctl.errors import Loc
from dshctl.runtime import Context, InlinePlugin, Service, State, ValidationError

from .helpers import FakeClock, run_async, runtime_errors, ticks


@run_async
async def test_item_12_uids_increase_root_is_zero_disposed_is_none():
    root = Context()
    assert root.fiber.uid == 0 and root.fiber.state is State.ACTIVE
    fibers = [root.plugin(lambda ctx: None) for _ in range(4)]
    uids = [f.uid for f in fibers]
    assert uids == sorted(uids) and len(set(uids)) == 4 and uids[0] > 0
    await fibers[1].dispose()
    assert fibers[1].uid is None
    again = root.plugin(lambda ctx: None)
    assert again.uid > max(uids)  # never reused
    assert Context().fiber.uid == 0  # each registry has its own counter


@run_async
async def test_item_13_plugin_returns_at_once_applies_after_a_tick():
    root = Context()
    applied = []
    fiber = root.plugin(lambda ctx, config: applied.append(config), {"a": 1})
    assert fiber.state is State.LOADING and applied == []
    await asyncio.sleep(0)                                 # apply runs one tick later
    assert applied == [{"a": 1}]
    assert await fiber is fiber
    assert fiber.state is State.ACTIVE


@run_async
async def test_item_14_unmet_inject_stays_pending_and_never_applies():
    root = Context()
    applied = []
    fiber = root.inject(["database"], lambda ctx: applied.append(True))
    await fiber
    await ticks(10)
    assert fiber.state is State.PENDING and applied == []


@run_async
async def test_item_15_dependency_needs_active_provider_and_passing_check(caplog):
    root = Context()
    applied = []
    ok = {"flag": False}
    root.provide("checked", 1, check=lambda: ok["flag"])
    gated = root.inject(["checked"], lambda ctx: applied.append("checked"))

    def broken_check():
        raise RuntimeError("check exploded")
    root.provide("broken", 2, check=broken_check)
    broken = root.inject(["broken"], lambda ctx: applied.append("broken"))
    await ticks()
    assert gated.state is State.PENDING and broken.state is State.PENDING and applied == []
    assert any("check exploded" in str(r.exc_info[1]) for r in runtime_errors(caplog))
    ok["flag"] = True
    await gated.restart()  # re-checks the binding
    assert gated.state is State.ACTIVE and applied == ["checked"]

    # An async Service.init keeps dependents PENDING until it finishes.
    release = asyncio.Event()

    class Database(Service):
        def __init__(self, ctx):
            super().__init__(ctx, "database")

        async def init(self):
            await release.wait()

    provider = root.plugin(Database)
    dependent = root.inject(["database"], lambda ctx: applied.append(ctx.database))
    await ticks(10)
    assert provider.state is State.LOADING and dependent.state is State.PENDING
    release.set()
    await provider
    await dependent
    assert dependent.state is State.ACTIVE and isinstance(applied[-1], Database)


@run_async
async def test_item_16_withdraw_returns_dependent_to_pending_and_reprovide_reapplies():
    root = Context()
    seq = []

    def dependent(ctx):
        seq.append(("apply", ctx.foo))
        return lambda: seq.append("dispose")

    withdraw = root.provide("foo", 1)
    fiber = await root.inject(["foo"], dependent)
    await withdraw()
    assert fiber.state is State.PENDING and seq == [("apply", 1), "dispose"]
    root.provide("foo", 2)
    await ticks()
    await fiber
    assert fiber.state is State.ACTIVE and seq[-1] == ("apply", 2)


@run_async
async def test_item_17_replaced_provider_restarts_dependent_but_set_does_not():
    root = Context()
    seq = []

    def provider(ctx, config):
        ctx.provide("foo", config)

    def dependent(ctx):
        seq.append(("apply", ctx.foo))
        return lambda: seq.append("stop")

    first = await root.plugin(provider, 1)
    fiber = await root.inject(["foo"], dependent)
    await first.dispose()
    second = await root.plugin(provider, 1)  # a different fiber, equal value
    await fiber
    assert seq == [("apply", 1), "stop", ("apply", 1)]
    assert fiber.state is State.ACTIVE

    second.ctx.set("foo", 99)
    await ticks(10)
    assert seq == [("apply", 1), "stop", ("apply", 1)]
    assert fiber.ctx.foo == 99


@run_async
async def test_item_18_running_transition_finishes_before_reacting_inertia_lock_1():
    # Cordis fiber.spec.ts "inertia lock 1", on a virtual clock: apply sleeps 1000 ms, its disposer too.
    root = Context()
    clock = FakeClock()
    applied = []

    async def apply(ctx):
        await clock.sleep(1000)
        applied.append(clock.now)
        return lambda: clock.sleep(1000)

    withdraw = root.provide("foo", 1)
    fiber = root.inject(["foo"], apply)
    await clock.advance(400)                  # 400
    assert fiber.state is State.LOADING
    withdraw()
    await clock.advance(400)                  # 800: the running reload is not interrupted
    assert fiber.state is State.LOADING
    await clock.advance(400)                  # 1200: apply ended at 1000, then the unload started
    assert fiber.state is State.UNLOADING and applied == [1000]
    root.provide("foo", 1)
    await clock.advance(1000)                 # 2200: the unload finished (2000) before reloading
    assert fiber.state is State.LOADING and applied == [1000]
    await clock.advance(1000)                 # 3200: the second apply ended at 3000
    assert fiber.state is State.ACTIVE and applied == [1000, 3000]


@run_async
async def test_item_19_same_provider_withdraws_and_reprovides_during_loading_no_restart():
    # Cordis fiber.spec.ts "inertia lock 2": the root withdraws foo and provides it again while the
    # dependent is LOADING; the epoch ends where it started, so the reload just completes.
    root = Context()
    clock = FakeClock()
    statuses, applied = [], []

    async def apply(ctx):
        await clock.sleep(1000)
        applied.append(clock.now)
        return lambda: clock.sleep(1000)

    withdraw = root.provide("foo", 1)
    fiber = root.inject(["foo"], apply)
    root.on("internal/status", lambda f, old: f is fiber and statuses.append(f.state))
    await clock.advance(400)                  # 400
    assert fiber.state is State.LOADING
    withdraw()
    await clock.advance(400)                  # 800
    assert fiber.state is State.LOADING
    root.provide("foo", 2)
    await clock.advance(400)                  # 1200
    assert fiber.state is State.ACTIVE and applied == [1000]
    assert statuses == [State.ACTIVE]         # no UNLOADING, no second LOADING


@run_async
async def test_item_20_raising_apply_fails_fiber_undoes_effects_siblings_untouched(caplog):
    root = Context()
    heard = []

    def plugin(ctx, config):
        ctx.on("event", lambda: heard.append(config))
        if not config.get("ok"):
            raise RuntimeError("plugin error")

    bad = root.plugin(plugin, {"ok": False})
    good = root.plugin(plugin, {"ok": True})
    await ticks(10)
    assert bad.state is State.FAILED and good.state is State.ACTIVE
    errors = runtime_errors(caplog)
    assert len(errors) == 1 and str(errors[0].exc_info[1]) == "plugin error"
    root.emit("event")
    assert heard == [{"ok": True}]
    assert bad.get_effects() == []
    with pytest.raises(RuntimeError, match="plugin error"):
        await bad


@run_async
async def test_item_21_raising_disposer_is_logged_others_still_run(caplog):
    root = Context()
    seq = []

    def plugin(ctx):
        ctx.effect(lambda: lambda: seq.append("first"))
        ctx.effect(lambda: lambda: (_ for _ in ()).throw(RuntimeError("dispose error")))
        ctx.effect(lambda: lambda: seq.append("third"))

    fiber = await root.plugin(plugin)
    assert await fiber.dispose() is None
    assert seq == ["third", "first"]
    errors = runtime_errors(caplog)
    assert len(errors) == 1 and str(errors[0].exc_info[1]) == "dispose error"
    assert fiber.state is State.DISPOSED


@run_async
async def test_item_22_unload_disposes_effects_lifo_child_fibers_included():
    root = Context()
    seq = []

    def child(ctx, config):
        return lambda: seq.append(config)

    def plugin(ctx):
        ctx.effect(lambda: lambda: seq.append("effect-1"))
        ctx.plugin(child, "child-1")
        ctx.on("x", print)
        ctx.effect(lambda: lambda: seq.append("effect-2"))
        ctx.plugin(child, "child-2")

    fiber = await root.plugin(plugin)
    await ticks()
    # A child fiber's disposal starts synchronously with internal/plugin; its own unload follows later.
    root.on("internal/plugin", lambda f: f.uid is None and f.config and seq.append(f"start {f.config}"))
    await fiber.dispose()
    assert seq[:4] == ["start child-2", "effect-2", "start child-1", "effect-1"]
    assert sorted(seq[4:]) == ["child-1", "child-2"]
    assert "x" not in root.registry.events.listeners


@run_async
async def test_item_23_disposing_parent_disposes_nested_plugins_and_runtimes():
    root = Context()
    fibers = {}

    def leaf(ctx):
        ctx.on("event", lambda: None)

    def middle(ctx):
        fibers["leaf"] = ctx.plugin(leaf)

    def top(ctx):
        fibers["middle"] = ctx.plugin(middle)

    fibers["top"] = await root.plugin(top)
    await ticks(10)
    assert len(root.registry) == 3 and leaf in root.registry
    await fibers["top"].dispose()
    await ticks(10)
    assert all(f.uid is None and f.state is State.DISPOSED for f in fibers.values())
    assert len(root.registry) == 0 and leaf not in root.registry
    assert "event" not in root.registry.events.listeners
    assert await fibers["top"].dispose() is None
    assert fibers["top"].state is State.DISPOSED


@run_async
async def test_item_24_failed_fiber_with_injects_reenters_without_injects_waits():
    root = Context()
    attempts = {"dep": 0, "plain": 0}

    def flaky(ctx):
        attempts["dep"] += 1
        if attempts["dep"] == 1:
            raise RuntimeError("first try fails")

    def plain(ctx):
        attempts["plain"] += 1
        if attempts["plain"] == 1:
            raise RuntimeError("fails once")

    withdraw = root.provide("foo", 1)
    dep = root.inject(["foo"], flaky)
    lone = root.plugin(plain)
    await ticks(10)
    assert dep.state is State.FAILED and lone.state is State.FAILED
    await withdraw()
    root.provide("foo", 2)      # the next notification re-enters the FAILED fiber
    await ticks(10)
    await dep
    assert dep.state is State.ACTIVE and attempts["dep"] == 2
    assert lone.state is State.FAILED and attempts["plain"] == 1
    await lone.restart()
    assert lone.state is State.ACTIVE and attempts["plain"] == 2


@run_async
async def test_item_25_update_on_failed_fiber_clears_error_and_restarts_with_config():
    root = Context()
    seen = []

    def plugin(ctx, config):
        seen.append(config)
        if config["fail"]:
            raise RuntimeError("bad config value")

    fiber = root.plugin(plugin, {"fail": True})
    with pytest.raises(RuntimeError):
        await fiber
    assert fiber.state is State.FAILED
    assert await fiber.update({"fail": False}) is fiber
    assert fiber.state is State.ACTIVE and fiber.error is None
    assert seen == [{"fail": True}, {"fail": False}] and fiber.config == {"fail": False}

    # A FAILED fiber whose provider is gone: update clears the error and it waits (PENDING).
    withdraw = root.provide("dep", 1)
    dependent = root.plugin(InlinePlugin(apply=plugin, inject=["dep"]), {"fail": True})
    with pytest.raises(RuntimeError):
        await dependent
    await withdraw()
    assert dependent.state is State.FAILED
    await dependent.update({"fail": False})
    assert dependent.state is State.PENDING and dependent.error is None
    root.provide("dep", 2)
    await ticks()
    await dependent
    assert dependent.state is State.ACTIVE and seen[-1] == {"fail": False}


@run_async
async def test_item_26_invalid_config_raises_validation_error_and_fails_fiber():
    root = Context()
    applied = []

    def plugin(ctx, config):
        applied.append(config)

    plugin.schema = {"type": "object", "properties": {"port": {"type": "integer"},
                                                      "host": {"type": "string", "default": "localhost"}},
                     "required": ["port"]}
    fiber = root.plugin(plugin, {"port": "eighty"})
    with pytest.raises(ValidationError) as info:
        await fiber
    assert str(info.value) == "invalid config:\n  - 'eighty' is not of type 'integer' (at port)"
    assert fiber.state is State.FAILED and applied == []
    [diag] = info.value.diagnostics(Loc("cordis.yml", 4, 5))
    assert (diag.file, diag.line, diag.column, diag.severity, diag.json_path) == \
        ("cordis.yml", 4, 5, "error", "$.port")
    assert diag.message == "invalid config: 'eighty' is not of type 'integer' (at port)"

    good = await root.plugin(plugin, {"port": 80})
    assert applied == [{"port": 80, "host": "localhost"}]
    with pytest.raises(ValidationError, match=r"invalid config:\n  - 'port' is a required property \(at <root>\)"):
        good.update({})          # raised synchronously on an ACTIVE fiber
    await ticks()
    assert good.state is State.ACTIVE and good.config == {"port": 80}
