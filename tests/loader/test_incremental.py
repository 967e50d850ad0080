"""The incremental update path (fastpath.py) against the full path it shortcuts.

Two loaders get the same random edits, one with ``Tree.incremental`` off: after every step their
trees, reports and errors must be identical. Plus the cases the fast path must not skip.
"""
from __future__ import annotations

import asyncio
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.core.yaml.nodes import JsExpr
from dshctl.loader import LoaderError
from dshctl.loader.transaction import settle
from dshctl.loader.tree import Tree

from .helpers import Log, Recorder, make_loader, run, states
from .test_properties import EDITS, AsyncRecorder, clone, edited, row_lists

def plugins(log):
    return [Recorder("p", log), Recorder("q", log), Recorder("prov", log, provides="svc"),
            Recorder("dep", log, inject=["svc"]), AsyncRecorder("async", log)]


async def apply(loader, rows):
    try:
        report = await loader.update(clone(rows))
    except LoaderError as err:
        return ("error", str(err))
    finally:  # dependents of a restored provider restart on their own: let them land
        await settle([entry.fiber for entry in loader.entries() if entry.fiber is not None])
    return ("ok", sorted(str(r.to_json()) for r in report.rows), sorted(report.unchanged))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=row_lists(), edits=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(EDITS),
                                                   st.integers(0, 2)), max_size=8))
def test_incremental_path_matches_the_full_path(start, edits):
    async def main():
        fast, full = make_loader(Log(), *plugins(Log())), make_loader(Log(), *plugins(Log()))
        outcomes = []
        for loader in (fast, full):
            try:
                await loader.start(clone(start), base_dir=".")
            except LoaderError as err:
                outcomes.append(str(err))
        assert len(set(outcomes)) <= 1 and len(outcomes) in (0, 2)
        if outcomes:
            return
        full.tree.incremental = False
        rows = start
        for index, change, value in edits:
            rows = edited(rows, index, change, value)
            assert await apply(fast, rows) == await apply(full, rows)
            assert fast.tree_snapshot() == full.tree_snapshot()
        await fast.stop()
        await full.stop()
    asyncio.run(asyncio.wait_for(main(), 30))


def planned_rows(monkeypatch) -> list[int]:
    """How many rows each update planned (spies on Tree._prepare, which runs for every plan)."""
    counts: list[int] = []
    real = Tree._prepare

    def spy(self, plans):
        counts.append(len(plans))
        return real(self, plans)
    monkeypatch.setattr(Tree, "_prepare", spy)
    return counts


def many(n, changed=None):
    out = [{"id": f"r{i}", "name": "p", "config": {"i": i}} for i in range(n)]
    if changed is not None:
        out[changed]["config"] = {"i": -1}
    return out


def test_a_one_row_edit_plans_only_that_row(monkeypatch):
    counts = planned_rows(monkeypatch)
    log = Log()

    async def main():
        loader = make_loader(log, Recorder("p", log))
        await loader.start(many(2000), base_dir=".")
        log.clear()
        report = await loader.update(many(2000, changed=700))
        assert counts == [2000, 1]
        assert log == [("dispose", "p", {"i": 700}), ("apply", "p", {"i": -1})]
        assert report.action_of("r700") == "restarted"
        assert len(report.unchanged) == 1999 and "r700" not in report.unchanged
        # a row removed and one added: only the new row is planned
        fewer = many(2000, changed=700)[:-1]
        fewer.insert(5, {"id": "new", "name": "p", "config": {"i": "new"}})
        log.clear()
        report = await loader.update(fewer)
        assert counts[-1] == 1 and loader.resolve("r1999") is None
        assert log == [("apply", "p", {"i": "new"}), ("dispose", "p", {"i": 1999})]  # §6.2 order
        assert [e.id for e in loader.entries()][4:7] == ["r4", "new", "r5"]
        assert report.action_of("r1999") == "stopped" and report.action_of("new") == "started"
        # rows reordered: the full path
        await loader.update(fewer[::-1])
        assert counts[-1] == 2000 and [e.id for e in loader.entries()] == [r["id"] for r in fewer[::-1]]
        await loader.stop()
    run(main())


def test_equal_rows_adopt_the_new_row_objects_so_locations_stay_current():
    log = Log()

    async def main():
        loader = make_loader(log, Recorder("p", log))
        await loader.start(many(3), base_dir=".")
        fresh = many(3, changed=0)
        await loader.update(fresh)
        assert all(entry.options is row for entry, row in zip(loader.entries(), fresh))
        assert loader.tree.rows is fresh
        await loader.stop()
    run(main())


def test_equal_row_with_js_disabled_is_evaluated_again(monkeypatch):
    counts = planned_rows(monkeypatch)
    log = Log()
    flag = "DSHCTL_TEST_INCREMENTAL_FLAG"
    monkeypatch.delenv(flag, raising=False)

    def rows():
        return [{"id": "a", "name": "p", "config": {"v": 1}},
                {"id": "b", "name": "p", "disabled": JsExpr(f"process.env.{flag} === 'off'"),
                 "config": {"v": 2}}]

    async def main():
        loader = make_loader(log, Recorder("p", log))
        await loader.start(rows(), base_dir=".")
        assert states(loader) == {"a": "ACTIVE", "b": "ACTIVE"}
        os.environ[flag] = "off"
        report = await loader.update(rows())          # equal rows, but `disabled` reads the env
        assert counts[-1] == 1 and report.action_of("b") == "stopped"
        assert states(loader) == {"a": "ACTIVE", "b": "DISABLED"}
        del os.environ[flag]                            # and when a row is added at the same time
        report = await loader.update(rows() + [{"id": "c", "name": "p", "config": {"v": 3}}])
        assert counts[-1] == 2 and report.action_of("b") == "started"
        assert states(loader) == {"a": "ACTIVE", "b": "ACTIVE", "c": "ACTIVE"}
        await loader.stop()
    run(main())


def test_equal_skipped_row_is_resolved_again(monkeypatch):
    counts = planned_rows(monkeypatch)
    log = Log()

    async def main():
        loader = make_loader(log, Recorder("p", log), skip_unavailable=True)
        rows = [{"id": "a", "name": "p"}, {"id": "b", "name": "late-plugin"}]
        report = await loader.start(clone(rows), base_dir=".")
        assert report.action_of("b") == "skipped"
        loader.resolver.builtins["late-plugin"] = Recorder("late-plugin", log)  # installed since
        report = await loader.update(clone(rows))
        assert counts[-1] == 1 and report.action_of("b") == "started"
        assert states(loader) == {"a": "ACTIVE", "b": "ACTIVE"}
        await loader.stop()
    run(main())
