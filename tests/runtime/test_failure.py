"""Failure atomicity beyond the checklist: hung apply/disposers, update hooks, fault injection."""
from __future__ import annotations

import asyncio

import pytest

from dshctl.runtime import Context, CordisError, RuntimeOptions, RuntimeTimeout, Service, State

from .helpers import run_async, runtime_errors, ticks


@run_async
async def test_hanging_apply_becomes_failed_after_timeout_and_effects_are_undone(caplog):
    root = Context(RuntimeOptions(apply_timeout=0.05))
    seq = []

    async def hangs(ctx):
        ctx.effect(lambda: lambda: seq.append("undone"))
        await asyncio.Event().wait()

    fiber = root.plugin(hangs)
    sibling = root.plugin(lambda ctx: None)
    with pytest.raises(RuntimeTimeout, match="did not finish apply within 0.05s"):
        await fiber
    assert fiber.state is State.FAILED and seq == ["undone"]
    assert sibling.state is State.ACTIVE
    assert len(runtime_errors(caplog)) == 1


@run_async
async def test_hanging_disposer_does_not_wedge_dispose(caplog):
    root = Context(RuntimeOptions(dispose_timeout=0.05))
    seq = []

    def plugin(ctx):
        ctx.effect(lambda: lambda: seq.append("fast"))

        async def never_finishes():
            await asyncio.Event().wait()
        ctx.effect(lambda: never_finishes)

    fiber = await root.plugin(plugin)
    await asyncio.wait_for(fiber.dispose(), 2)
    assert fiber.state is State.DISPOSED and seq == ["fast"]
    assert any("did not finish" in r.getMessage() for r in runtime_errors(caplog))

    restarted = await root.plugin(plugin)
    with pytest.raises(RuntimeTimeout):
        await restarted.restart()
    assert restarted.state is State.FAILED


@run_async
async def test_update_hook_handles_change_in_place_without_restart():
    root = Context()
    applied, received = [], []

    def plugin(ctx, config):
        applied.append(config)

        def on_update(fiber, config, no_save, next):
            received.append((config, no_save))
            if config.get("restart"):
                return next()
        ctx.on("internal/update", on_update)

    fiber = await root.plugin(plugin, {"v": 1})
    other = await root.plugin(plugin, {"v": "other"})
    await fiber.update({"v": 2}, no_save=True)
    assert applied == [{"v": 1}, {"v": "other"}] and fiber.config == {"v": 2}
    assert received == [({"v": 2}, True)]          # the other fiber's hook did not run
    await fiber.update({"v": 3, "restart": True})
    assert applied[-1] == {"v": 3, "restart": True} and fiber.state is State.ACTIVE
    assert other.state is State.ACTIVE


@run_async
async def test_update_surfaces_a_failed_reload_and_dropping_it_is_silent(caplog):
    root = Context()
    mode = {"fail": False}

    def plugin(ctx):
        if mode["fail"]:
            raise RuntimeError("boom")

    fiber = await root.plugin(plugin)
    mode["fail"] = True
    with pytest.raises(RuntimeError, match="boom"):
        await fiber.update({})
    assert fiber.state is State.FAILED
    mode["fail"] = False
    fiber.update({"dropped": True})    # not awaited: no "never retrieved" noise
    await ticks(10)
    assert fiber.state is State.ACTIVE
    assert not [r for r in caplog.records if r.name == "asyncio"]


@run_async
async def test_restart_during_loading_is_not_absorbed_by_inertia():
    root = Context()
    gate = asyncio.Event()
    applied = []

    async def plugin(ctx, config):
        applied.append(config)
        await gate.wait()

    fiber = root.plugin(plugin, "old")
    await ticks()
    waiting = fiber.update("new")      # while LOADING: stored, restart queued behind the reload
    gate.set()
    await waiting
    assert applied == ["old", "new"] and fiber.state is State.ACTIVE


@run_async
async def test_invalid_plugin_and_disposed_operations_raise():
    root = Context()
    with pytest.raises(CordisError, match=r'invalid plugin, expect function or object with an "apply" '
                                          r"method, received int"):
        root.plugin(42)
    fiber = await root.plugin(lambda ctx: None)
    await fiber.dispose()
    with pytest.raises(CordisError, match="inactive context"):
        fiber.update({})
    with pytest.raises(CordisError, match="inactive context"):
        fiber.restart()


@run_async
async def test_plugin_shapes_class_object_module_and_metadata():
    import types
    root = Context()
    seen = []

    class Klass:
        inject = {"dep": {"mode": "fast"}}

        def __init__(self, ctx, config):
            seen.append(("class", config, ctx.intercept_config("dep")))

    obj = types.SimpleNamespace(name="objplugin", apply=lambda ctx, config: seen.append(("object", config)))
    module = types.ModuleType("modplugin")
    module.apply = lambda ctx: seen.append(("module", None))
    root.provide("dep", 1)
    fibers = [root.plugin(Klass, 1), root.plugin(obj, 2), root.plugin(module)]
    for f in fibers:
        await f
    assert sorted(seen, key=str) == sorted([("class", 1, {"mode": "fast"}), ("object", 2), ("module", None)],
                                           key=str)
    assert [f.name for f in fibers] == ["Klass", "objplugin", "modplugin"]
    assert root.intercept("dep", {"a": 1}).intercept("dep", {"a": 2, "b": 3}).intercept_config("dep") == \
        {"a": 2, "b": 3}


@run_async
async def test_root_dispose_unloads_everything_but_root_stays_active():
    root = Context()
    seq = []
    await root.plugin(lambda ctx: (lambda: seq.append("child")))
    root.effect(lambda: lambda: seq.append("root effect"))
    await root.fiber.dispose()
    await ticks(10)
    assert sorted(seq) == ["child", "root effect"]
    assert root.fiber.state is State.ACTIVE and root.fiber.uid == 0
    assert len(root.registry) == 0 and root.get_effects() == []


@run_async
async def test_service_with_async_generator_init_yields_its_disposer():
    seq = []

    class Cache(Service):
        def __init__(self, ctx, config):
            super().__init__(ctx, "cache")
            self.size = config["size"]

        async def init(self):
            seq.append("open")
            yield lambda: seq.append("close")
            seq.append("warmed")

    root = Context()
    fiber = await root.plugin(Cache, {"size": 3})
    user = await root.inject(["cache"], lambda ctx: seq.append(("uses", ctx.cache.size)))
    assert seq == ["open", "warmed", ("uses", 3)]
    assert fiber.get_effects() == [{"label": "apply", "children": []}, {"label": 'ctx.provide("cache")', "children": []}]
    await fiber.dispose()
    assert seq[-1] == "close" and user.state is State.PENDING
