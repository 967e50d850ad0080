"""The registry and the hooks the loader builds on: internal/plugin, internal/config, delete, parent_ctx."""
from __future__ import annotations

import pytest

from dshctl.runtime import Context, State, ValidationError

from .helpers import run_async, ticks


@run_async
async def test_registry_delete_disposes_every_fiber_of_a_plugin():
    root = Context()
    cleaned = []

    def plugin(ctx, config):
        return lambda: cleaned.append(config)

    other = await root.plugin(lambda ctx: None)
    fibers = [root.plugin(plugin, n) for n in range(3)]
    for fiber in fibers:
        await fiber
    assert plugin in root.registry and len(root.registry.get(plugin).fibers) == 3
    await root.registry.delete(plugin)
    assert sorted(cleaned) == [0, 1, 2] and plugin not in root.registry
    assert all(f.state is State.DISPOSED for f in fibers) and other.state is State.ACTIVE
    assert root.registry.delete(plugin) is None


@run_async
async def test_internal_plugin_hook_can_merge_a_rows_inject_before_the_first_epoch():
    root = Context()
    seen = []

    def merge_row_inject(fiber):
        if fiber.uid is not None and fiber.name == "row":
            fiber.inject.update({"db": {"timeout": 5}})

    def row(ctx):
        seen.append((ctx.db, ctx.intercept_config("db")))

    row.name = "row"
    root.on("internal/plugin", merge_row_inject)
    fiber = root.plugin(row)
    await ticks()
    assert fiber.state is State.PENDING and seen == []     # waits for the merged inject
    root.provide("db", "conn")
    await ticks()
    await fiber
    assert seen == [("conn", {"timeout": 5})]


@run_async
async def test_internal_config_pipeline_runs_before_schema_validation():
    root = Context()
    applied = []

    def interpolate(fiber, config):
        if isinstance(config, dict) and config.get("port") == "$PORT":
            return {**config, "port": 8080}
        return None

    def server(ctx, config):
        applied.append(config)

    server.schema = {"type": "object", "properties": {"port": {"type": "integer"}}}
    root.on("internal/config", interpolate)
    fiber = await root.plugin(server, {"port": "$PORT"})
    assert applied == [{"port": 8080}] and fiber.config == {"port": "$PORT"}
    with pytest.raises(ValidationError):
        fiber.update({"port": "not a port"})


@run_async
async def test_parent_ctx_keeps_realms_for_replugging():
    root = Context()
    isolated = root.isolate("svc", "group")
    isolated.provide("svc", "in the group")
    root.provide("svc", "global")

    def plugin(ctx):
        return None

    plugin.inject = ["svc"]
    fiber = await isolated.plugin(plugin)
    assert fiber.ctx.svc == "in the group"
    await fiber.dispose()
    again = await fiber.parent_ctx.plugin(plugin)
    assert again.ctx.svc == "in the group"


def _snapshot(root: Context) -> tuple:
    registry = root.registry
    return (len(registry), {k: len(v) for k, v in registry.events.listeners.items()},
            set(registry.services.bindings), {k: len(v) for k, v in registry.services.dependents.items()},
            len(root.fiber._effects))


@run_async
async def test_plug_then_dispose_leaves_no_trace():
    root = Context()
    root.provide("db", 1)

    def plugin(ctx):
        ctx.on("event", print)
        ctx.provide("cache", {})
        ctx.plugin(lambda child: child.on("nested", print))

    plugin.inject = ["db"]
    before = _snapshot(root)
    fiber = await root.plugin(plugin)
    await ticks()
    during = _snapshot(root)
    assert during != before
    await fiber.dispose()
    await ticks()
    assert _snapshot(root) == before
    again = await root.plugin(plugin)
    await ticks()
    assert _snapshot(root) == during
    await root.fiber.restart()   # restarting the root unloads everything, the root stays ACTIVE
    assert again.state is State.DISPOSED and root.fiber.state is State.ACTIVE
    assert len(root.registry) == 0 and root.get("db") is None


@run_async
async def test_failing_internal_plugin_hook_leaves_no_half_registered_fiber():
    root = Context()

    def broken_hook(fiber):
        if fiber.uid is not None:
            raise RuntimeError("hook failed")

    root.on("internal/plugin", broken_hook)

    def plugin(ctx):
        return None

    with pytest.raises(RuntimeError, match="hook failed"):
        root.plugin(plugin)
    assert plugin not in root.registry
    assert [e["label"] for e in root.get_effects()] == ['ctx.on("internal/plugin")']
