"""Rows to fibers: checklist items 31-35 and 73 (cordis-runtime.md §6.1-§6.3)."""
from __future__ import annotations

import re

import pytest

from dshctl.loader import LoaderError

from .helpers import Log, Recorder, live_fibers, make_loader, rows_of, run, states


def test_item_31_each_row_one_fiber_disabled_never_applied_group_loads_children():
    log = Log()
    a, b = Recorder("a", log), Recorder("b", log)

    async def main():
        loader = make_loader(log, a, b)
        await loader.start(rows_of("""
- {id: one, name: a, config: {n: 1}}
- {id: off, name: a, disabled: true, config: {n: 2}}
- id: g
  name: cordis:group
  group: true
  config:
    - {id: inner, name: b, config: {n: 3}}
"""), base_dir=".")
        assert states(loader) == {"one": "ACTIVE", "off": "DISABLED", "g": "ACTIVE", "inner": "ACTIVE"}
        assert sorted(c["n"] for _, c in log.of("apply")) == [1, 3]
        assert live_fibers(loader) == 3  # one, g, inner
        await loader.stop()
        assert live_fibers(loader) == 0
    run(main())


def test_item_32_reconcile_by_id_unchanged_untouched_removed_disposed_new_applied():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([{"id": "keep", "name": "p", "config": 1}, {"id": "gone", "name": "p", "config": 2},
                            {"id": "later", "name": "p", "disabled": True, "config": 3}], base_dir=".")
        log.clear()
        report = await loader.update([{"id": "keep", "name": "p", "config": 1},
                                      {"id": "later", "name": "p", "config": 3},
                                      {"id": "new", "name": "p", "config": 4}])
        assert log.of("dispose") == [("p", 2)]
        assert sorted(c for _, c in log.of("apply")) == [3, 4]
        assert report.action_of("keep") == "unchanged"
        assert report.action_of("gone") == "stopped"
        assert report.action_of("new") == "started" and report.action_of("later") == "started"
        await loader.stop()
    run(main())


def test_item_33_generated_ids_are_8_hex_unique_and_written_into_the_row():
    log = Log()
    p = Recorder("p", log)
    rows = [{"name": "p", "config": i} for i in range(50)] + [{"id": "", "name": "p"}]

    async def main():
        loader = make_loader(log, p)
        await loader.start(rows, base_dir=".")
        ids = [row["id"] for row in rows]
        assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
        assert len(set(ids)) == len(ids)
        assert [e.id for e in loader.entries()] == ids
        await loader.stop()
    run(main())


def test_item_34_full_ids_and_resolve_walk_into_includes(tmp_path):
    log = Log()
    p = Recorder("p", log)
    (tmp_path / "sub.yml").write_text("- {id: x, name: p, config: inner}\n")

    async def main():
        loader = make_loader(log, p)
        await loader.start([{"id": "inc", "name": "cordis:include", "config": {"path": "sub.yml"}},
                            {"id": "x", "name": "p", "config": "outer"}], base_dir=tmp_path)
        assert loader.resolve("inc:x").fiber.config == "inner"   # same local id, another tree
        assert loader.resolve("x").fiber.config == "outer"
        assert loader.resolve("inc:x").full_id == "inc:x"
        assert loader.resolve("inc:nope") is None and loader.resolve("nope:x") is None
        await loader.stop()
    run(main())


def test_item_35_duplicate_ids_in_one_list_refused_before_any_change():
    log = Log()
    p = Recorder("p", log)

    async def main():
        loader = make_loader(log, p)
        await loader.start([{"id": "a", "name": "p", "config": 1}], base_dir=".")
        log.clear()
        bad = rows_of("- {id: a, name: p, config: 2}\n- {id: b, name: p}\n- {id: b, name: p}\n", "f.yml")
        with pytest.raises(LoaderError) as info:
            await loader.update(bad)
        assert info.value.message == "duplicate loader entry id: b"
        assert str(info.value.loc) == "f.yml:3:8"
        assert log == [] and states(loader) == {"a": "ACTIVE"}
        await loader.stop()
    run(main())


def test_item_73_duplicate_id_across_groups_is_refused():
    log = Log()
    p = Recorder("p", log)
    text = """
- {id: g1, name: cordis:group, group: true, config: [{id: x, name: p}]}
- {id: g2, name: cordis:group, group: true, config: [{id: x, name: p}]}
"""

    async def main():
        loader = make_loader(log, p)
        with pytest.raises(LoaderError) as info:
            await loader.start(rows_of(text), base_dir=".")
        assert info.value.message == "duplicate loader entry id: x"
        assert log == [] and live_fibers(loader) == 0
        await loader.start(rows_of(text.replace("[{id: x", "[{id: y", 1)), base_dir=".")  # retry works
        assert states(loader) == {"g1": "ACTIVE", "y": "ACTIVE", "g2": "ACTIVE", "x": "ACTIVE"}
        await loader.stop()
    run(main())


@pytest.mark.parametrize("row, message", [
    ({"id": "a:b", "name": "p"}, 'contains ":"'),
    ({"id": 7, "name": "p"}, "must be a non-empty string"),
    ({"id": "a"}, 'is not a plugin row'),
])
def test_bad_rows_refused_with_location(row, message):
    async def main():
        loader = make_loader(Log(), Recorder("p", Log()))
        with pytest.raises(LoaderError, match=message):
            await loader.start([row], base_dir=".")
    run(main())
