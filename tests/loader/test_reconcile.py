"""Reconciliation by id and transactional updates: checklist items 36-43, 47, 48, 71, 72."""
from __future__ import annotations

import asyncio

import pytest

from dshctl.loader import LoaderError, LoaderUpdateError

from .helpers import Log, Recorder, live_fibers, make_loader, rows_of, run, states


def row(id_, name, config=None, **extra):
    out = {"id": id_, "name": name, **extra}
    if config is not None:
        out["config"] = config
    return out


def test_item_36_config_only_change_restarts_with_new_config_or_runs_update_hook():
    log = Log()
    p, hooked = Recorder("p", log), Recorder("hooked", log, on_update=True)

    async def main():
        loader = make_loader(log, p, hooked)
        await loader.start([row("a", "p", {"v": 1}), row("b", "p", {"v": 1}), row("h", "hooked", {"v": 1})],
                           base_dir=".")
        log.clear()
        report = await loader.update([row("a", "p", {"v": 2}), row("b", "p", {"v": 1}),
                                      row("h", "hooked", {"v": 2})])
        assert [e for e in log if e[1] == "p"] == [("dispose", "p", {"v": 1}), ("apply", "p", {"v": 2})]
        assert [e for e in log if e[1] == "hooked"] == [("in-place", "hooked", {"v": 2})]
        assert report.action_of("a") == "restarted" and report.action_of("h") == "updated"
        assert report.action_of("b") == "unchanged"
        assert loader.resolve("h").fiber.config == {"v": 2}
        await loader.stop()
    run(main())


def test_item_37_name_change_imports_first_and_restores_old_plugin_on_failure(tmp_path):
    log = Log()
    old, new = Recorder("old", log), Recorder("new", log)
    (tmp_path / "broken.py").write_text("raise ImportError('no such thing')\n")

    async def main():
        loader = make_loader(log, old, new)
        await loader.start([row("a", "old", {"v": 1})], base_dir=tmp_path)
        first = loader.resolve("a").fiber
        log.clear()
        with pytest.raises(LoaderError) as info:
            await loader.update([row("a", "./broken.py", {"v": 1})])
        assert info.value.message.startswith("failed to import loader entry a (./broken.py): ")
        assert log == [] and loader.resolve("a").fiber is first  # the old fiber never stopped

        with pytest.raises(LoaderUpdateError) as info:
            await loader.update([row("a", "new", {"fail": True})])
        assert info.value.message.startswith("failed to apply loader entry a (new): RuntimeError")
        assert log == [("dispose", "old", {"v": 1}), ("fail", "new", {"fail": True}), ("apply", "old", {"v": 1})]
        assert states(loader) == {"a": "ACTIVE"} and loader.resolve("a").name == "old"
        await loader.stop()
    run(main())


def test_item_38_failed_in_place_config_restart_restores_previous_config():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([row("a", "p", {"v": 1})], base_dir=".")
        with pytest.raises(LoaderUpdateError, match="failed to apply loader entry a"):
            await loader.update([row("a", "p", {"fail": True})])
        fiber = loader.resolve("a").fiber
        assert fiber.config == {"v": 1} and states(loader) == {"a": "ACTIVE"}
        assert log[-1] == ("apply", "p", {"v": 1})
        assert loader.resolve("a").options["config"] == {"v": 1}
        await loader.stop()
    run(main())


def test_item_39_intercept_change_is_applied_without_reload():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([row("a", "p", {}, intercept={"svc": {"x": 1}})], base_dir=".")
        fiber = loader.resolve("a").fiber
        log.clear()
        report = await loader.update([row("a", "p", {}, intercept={"svc": {"x": 2}})])
        assert log == [] and report.action_of("a") == "updated"
        assert loader.resolve("a").fiber is fiber and fiber.ctx.intercept_config("svc") == {"x": 2}
        await loader.stop()
    run(main())


def test_item_40_isolate_restarts_only_dependents_whose_provider_changes():
    log = Log()
    prov = Recorder("prov", log, provides="svc")
    dep = Recorder("dep", log, inject=["svc"])
    other = Recorder("other", log)

    async def main():
        loader = make_loader(log, prov, dep, other)
        base = [row("p", "prov", {}), row("d", "dep", {}), row("o", "other", {})]
        await loader.start(base, base_dir=".")
        log.clear()
        await loader.update([row("p", "prov", {}, isolate={"unrelated": True}), row("d", "dep", {}),
                             row("o", "other", {})])
        assert log == []  # an irrelevant service: nothing restarts

        await loader.update([row("p", "prov", {}, isolate={"svc": True}), row("d", "dep", {}),
                             row("o", "other", {})])
        assert ("dispose", "dep", {}) in log and ("apply", "dep", {}) not in log
        assert all(item[1] != "other" for item in log)
        assert states(loader) == {"p": "ACTIVE", "d": "PENDING", "o": "ACTIVE"}

        log.clear()
        await loader.update([row("p", "prov", {}, isolate={"svc": "shared"}),
                             row("d", "dep", {}, isolate={"svc": "shared"}), row("o", "other", {})])
        assert ("apply", "dep", {}) in log and states(loader)["d"] == "ACTIVE"
        await loader.stop()
    run(main())


def test_item_41_disable_plain_row_and_group_row():
    log = Log()
    p = Recorder("p", log)

    def tree(group_off=False, row_off=False):
        g = row("g", "cordis:group", [row("x", "p", "x"), row("y", "p", "y")], group=True)
        if group_off:
            g["disabled"] = True
        r = row("r", "p", "r")
        if row_off:
            r["disabled"] = True
        return [g, r]

    async def main():
        loader = make_loader(log, p)
        await loader.start(tree(), base_dir=".")
        group_fiber = loader.resolve("g").fiber
        log.clear()
        await loader.update(tree(row_off=True))
        assert log == [("dispose", "p", "r")] and states(loader)["r"] == "DISABLED"
        await loader.update(tree())
        assert log[-1] == ("apply", "p", "r")
        log.clear()
        await loader.update(tree(group_off=True))
        assert sorted(log) == [("dispose", "p", "x"), ("dispose", "p", "y")]
        assert loader.resolve("g").fiber is group_fiber and states(loader)["g"] == "ACTIVE"
        assert states(loader)["x"] == "DISABLED"
        await loader.update(tree())
        assert states(loader) == {"g": "ACTIVE", "x": "ACTIVE", "y": "ACTIVE", "r": "ACTIVE"}
        await loader.stop()
    run(main())


def test_item_42_moves_between_groups():
    log = Log()
    p = Recorder("p", log)

    def tree(where):
        groups = {"g1": [], "g2": [], "off": []}
        groups[where].append(row("x", "p", "x"))
        return [row("g1", "cordis:group", groups["g1"], group=True),
                row("g2", "cordis:group", groups["g2"], group=True),
                row("off", "cordis:group", groups["off"], group=True, disabled=True)]

    async def main():
        loader = make_loader(log, p)
        await loader.start(tree("g1"), base_dir=".")
        fiber = loader.resolve("x").fiber
        log.clear()
        await loader.update(tree("g2"))
        assert log == [] and loader.resolve("x").fiber is fiber
        assert [c.id for c in loader.resolve("g2").children] == ["x"]
        await loader.update(tree("off"))
        assert log == [("dispose", "p", "x")] and states(loader)["x"] == "DISABLED"
        await loader.update(tree("g1"))
        assert log[-1] == ("apply", "p", "x") and states(loader)["x"] == "ACTIVE"
        await loader.stop()
    run(main())


def test_group_plugin_without_flag_mounts_rows_and_is_disabled_whole():
    log = Log()
    p = Recorder("p", log)
    rows = [row("g", "cordis:group", [row("x", "p", "x")])]

    async def main():
        loader = make_loader(log, p)
        await loader.start(rows, base_dir=".")
        assert states(loader) == {"g": "ACTIVE", "x": "ACTIVE"}
        await loader.update([row("g", "cordis:group", [row("x", "p", "x")], disabled=True)])
        assert states(loader) == {"g": "DISABLED", "x": "DISABLED"}   # no `group: true`: all of it
        await loader.stop()
    run(main())


def test_item_42_programmatic_move_and_failed_move_returns_row_to_old_place():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([row("g1", "cordis:group", [row("a", "p", 1), row("x", "p", 2), row("b", "p", 3)],
                                group=True),
                            row("g2", "cordis:group", [row("c", "p", 4)], group=True)], base_dir=".")
        tree = loader.tree
        fiber = loader.resolve("x").fiber
        with pytest.raises(LoaderUpdateError):
            await tree.update_entry("x", {"config": {"fail": True}}, parent_id="g2", position=0)
        assert [c.id for c in loader.resolve("g1").children] == ["a", "x", "b"]
        assert [c.id for c in loader.resolve("g2").children] == ["c"]
        assert loader.resolve("x").fiber.config == 2 and loader.resolve("x").fiber.state.name == "ACTIVE"
        assert fiber.uid is None or loader.resolve("x").fiber is fiber
        log.clear()
        await tree.update_entry("x", parent_id="g2", position=0)        # a plain move: no restart
        assert [c.id for c in loader.resolve("g2").children] == ["x", "c"] and log == []
        await tree.create({"id": "n", "name": "p", "config": 5}, parent_id="g1", position=1)
        assert [c.id for c in loader.resolve("g1").children] == ["a", "n", "b"]
        await tree.remove("a")
        assert [c.id for c in loader.resolve("g1").children] == ["n", "b"] and log.of("dispose") == [("p", 1)]
        await tree.update_entry("n", {"config": None, "note": "kept"})
        assert "config" not in loader.resolve("n").options and loader.resolve("n").options["note"] == "kept"
        await loader.stop()
    run(main())


def test_item_43_intercept_chain_inner_shadows_outer_values_stay_reachable():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start(rows_of("""
- id: g
  name: cordis:group
  group: true
  intercept: {svc: {a: outer, b: outer}}
  config:
    - {id: x, name: p, intercept: {svc: {b: inner}}}
    - {id: y, name: p}
"""), base_dir=".")
        assert loader.resolve("x").fiber.ctx.intercept_config("svc") == {"a": "outer", "b": "inner"}
        assert loader.resolve("y").fiber.ctx.intercept_config("svc") == {"a": "outer", "b": "outer"}
        await loader.stop()
    run(main())


def test_item_47_loader_gate_keeps_row_pending_until_other_tasks_settled():
    log = Log()
    seen = []

    class Slow:
        name = "slow"

        async def apply(self, ctx, config):
            await asyncio.sleep(0.02)
            seen.append(("slow done", gated_state()))

    gated = Recorder("gated", log)
    loader = make_loader(log, gated)
    loader.resolver.builtins["slow"] = Slow()

    def gated_state():
        return loader.resolve("g").fiber.state.name

    async def main():
        await loader.start([row("s", "slow"), row("g", "gated", {}, inject=["loader"],
                                                   intercept={"loader": {"await": True}})], base_dir=".")
        assert seen == [("slow done", "PENDING")]
        await asyncio.sleep(0.01)
        assert states(loader)["g"] == "ACTIVE"
        await loader.stop()
    run(main())


def test_item_48_failed_update_rolls_back_updates_and_additions_then_next_edit_applies():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([row("a", "p", {"v": 1}), row("b", "p", {"v": 1})], base_dir=".")
        before = loader.tree_snapshot()
        with pytest.raises(LoaderUpdateError) as info:
            await loader.update([row("a", "p", {"v": 2}), row("new", "p", {"v": 1}),
                                 row("bad", "p", {"fail": True}), row("worse", "p", {"fail": 2})])
        message = info.value.message
        assert message.startswith("loader entries failed to apply: ")
        assert "entry bad (p)" in message and "entry worse (p)" in message
        assert info.value.report.action_of("new") == "rolled-back"
        assert loader.tree_snapshot() == before and live_fibers(loader) == 2
        assert ("dispose", "p", {"v": 1}) in log  # `new` was removed again
        await loader.update([row("a", "p", {"v": 3})])
        assert states(loader) == {"a": "ACTIVE"} and loader.resolve("a").fiber.config == {"v": 3}
        await loader.stop()
    run(main())


def test_item_71_row_moved_out_of_deleted_group_stays_loaded_with_one_fiber():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([row("g", "cordis:group", [row("x", "p", "x")], group=True)], base_dir=".")
        fiber = loader.resolve("x").fiber
        await loader.update([row("x", "p", "x")])
        entry = loader.resolve("x")
        assert entry is not None and entry.fiber is fiber and fiber.state.name == "ACTIVE"
        assert loader.resolve("g") is None and live_fibers(loader) == 1
        assert log.of("dispose") == []
        await loader.stop()
    run(main())


def test_item_72_replacement_waits_for_old_disposal_before_reproviding():
    log = Log()

    class Provider:
        def __init__(self, name):
            self.name = name

        def apply(self, ctx, config):
            ctx.provide("svc", self.name)

            async def slow_dispose():
                await asyncio.sleep(0.02)
                log.append(("gone", self.name))
            ctx.effect(lambda: slow_dispose)
            log.append(("up", self.name))

    async def main():
        loader = make_loader(log)
        loader.resolver.builtins.update({"one": Provider("one"), "two": Provider("two")})
        await loader.start([row("p", "one")], base_dir=".")
        await loader.update([row("p", "two")])
        assert log == [("up", "one"), ("gone", "one"), ("up", "two")]
        assert loader.root_ctx.get("svc") == "two"
        await loader.stop()
    run(main())


def test_failed_rollback_is_reported_as_such():
    log = Log()
    applies = []

    class Flaky:
        """Works twice, then refuses: the restore of the old config fails."""
        name = "flaky"

        def apply(self, ctx, config):
            applies.append(config)
            if len(applies) > 2:
                raise RuntimeError("worn out")

    bad = Recorder("bad", log)

    async def main():
        loader = make_loader(log, bad)
        loader.resolver.builtins["flaky"] = Flaky()
        await loader.start([row("a", "flaky", {"v": 1})], base_dir=".")
        with pytest.raises(LoaderUpdateError) as info:
            await loader.update([row("a", "flaky", {"v": 2}), row("b", "bad", {"fail": True})])
        err = info.value
        assert err.rollback_failed is True
        assert err.message.startswith("loader entry rollback failed: failed to apply loader entry b (bad)")
        assert err.message.endswith("; restoring the previous tree failed: "
                                    "failed to apply loader entry a (flaky): RuntimeError: worn out")
        assert applies == [{"v": 1}, {"v": 2}, {"v": 1}]
        assert states(loader) == {"a": "FAILED"}      # honest: the old row could not come back
        await loader.stop()
    run(main())
