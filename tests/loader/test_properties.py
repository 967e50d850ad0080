"""Property tests: random sequences of entry-list edits, with plugins failing at random points.

After every step the running tree equals either the new list (the update succeeded) or the previous
one (it raised) — never a mix — and no fiber outlives its row.
"""
from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from dshctl.loader import LoaderError

from .helpers import Log, Recorder, make_loader

IDS = ["a", "b", "c", "d", "e"]
NAMES = ["p", "q", "prov", "dep", "async"]


class AsyncRecorder(Recorder):
    """Fails (or not) only after yielding to the loop: a failure at a later point of apply."""

    async def apply(self, ctx, config):
        await asyncio.sleep(0)
        Recorder.apply(self, ctx, config)


@st.composite
def row_lists(draw):
    ids = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=5))
    rows = []
    for entry_id in ids:
        row = {"id": entry_id, "name": draw(st.sampled_from(NAMES)),
               "config": draw(st.sampled_from([{"v": 0}, {"v": 1}, {"fail": True}]))}
        if draw(st.booleans()) and draw(st.booleans()):
            row["disabled"] = True
        extra = draw(st.sampled_from([None, "isolate", "inject", "intercept"]))
        if extra == "isolate":
            row["isolate"] = {"svc": draw(st.sampled_from([True, "shared"]))}
        elif extra == "inject":
            row["inject"] = ["svc"]
        elif extra == "intercept":
            row["intercept"] = {"svc": {"level": draw(st.integers(0, 1))}}
        rows.append(row)
    if rows and draw(st.booleans()):   # nest a tail of the rows in a group, maybe disabled
        cut = draw(st.integers(0, len(rows)))
        group = {"id": "g", "name": "cordis:group", "group": True, "config": rows[cut:]}
        if draw(st.booleans()) and draw(st.booleans()):
            group["disabled"] = True
        rows = rows[:cut] + [group]
    return rows


def flat(rows, hidden=False):
    """(id, row, mounted) in pre-order: what the running tree must look like for ``rows``."""
    for row in rows:
        off = bool(row.get("disabled"))
        if row.get("group"):
            yield row["id"], row, not hidden
            yield from flat(row["config"], hidden or off)
        else:
            yield row["id"], row, not hidden and not off


def clone(rows):
    return [{**r, "config": clone(r["config"])} if r.get("group") else dict(r) for r in rows]


EDITS = ["config", "fail", "name", "disabled", "inject", "isolate", "intercept", "add", "remove",
         "move", "id"]


def edited(rows: list, index: int, change: str, value: int) -> list:
    """A copy of ``rows`` with one plain row changed in one option (same ids, same places)."""
    rows = clone(rows)
    if change == "add":     # a new plain row (its id may clash with one inside a group)
        new_id = ["n", "m", "a"][value]
        if all(r["id"] != new_id for r in rows):
            rows.insert(index % (len(rows) + 1), {"id": new_id, "name": NAMES[index], "config": {"v": 0}})
        return rows
    if change == "remove" and rows:
        del rows[index % len(rows)]
        return rows
    if change == "move" and len(rows) > 1:
        rows.insert(value % len(rows), rows.pop(index % len(rows)))
        return rows
    plain = [r for r in rows if not r.get("group")]
    if not plain:
        return rows
    target = plain[index % len(plain)]
    if change == "id":      # renumbered: one row goes, another comes at its place
        target["id"] = ["x", "y", "a"][value]
    elif change == "config":
        target["config"] = {"v": value}
    elif change == "fail":
        target["config"] = {"fail": True}
    elif change == "name":
        target["name"] = NAMES[value % len(NAMES)]
    elif change == "disabled":
        target["disabled"] = bool(value % 2)
    elif change == "inject":
        target["inject"] = ["svc"] if value % 2 else []
    elif change == "isolate":
        target["isolate"] = {"svc": True} if value % 2 else {}
    else:
        target["intercept"] = {"svc": {"level": value}}
    return rows


class LoaderMachine(RuleBasedStateMachine):
    @initialize()
    def boot(self):
        self.loop = asyncio.new_event_loop()
        self.log = Log()
        plugins = [Recorder("p", self.log), Recorder("q", self.log),
                   Recorder("prov", self.log, provides="svc"), Recorder("dep", self.log, inject=["svc"]),
                   AsyncRecorder("async", self.log)]
        self.loader = make_loader(self.log, *plugins)
        self.committed: list = []
        self.loop.run_until_complete(self.loader.start([], base_dir="."))

    @rule(rows=row_lists())
    def update(self, rows):
        try:
            self.loop.run_until_complete(asyncio.wait_for(self.loader.update(clone(rows)), 20))
        except LoaderError:
            return  # the invariant checks the previous list still runs
        self.committed = clone(rows)

    @rule(index=st.integers(0, 4), change=st.sampled_from(EDITS), value=st.integers(0, 2))
    def edit_one_row_in_place(self, index, change, value):
        """What a reload usually is: the same rows, one of them edited (the incremental path)."""
        self.update(edited(self.committed, index, change, value))

    @invariant()
    def tree_is_exactly_the_committed_list(self):
        if not hasattr(self, "loader"):
            return
        expected = list(flat(self.committed))
        entries = self.loader.entries()
        assert [e.id for e in entries] == [i for i, _, _ in expected]
        for entry, (_, row, mounted) in zip(entries, expected):
            assert entry.options == row
            assert (entry.fiber is not None) == mounted, (entry, mounted)
            if mounted:
                assert entry.fiber.uid is not None and entry.fiber.plugin.name == row["name"]
                if not entry.is_group:
                    assert entry.fiber.config == row["config"]
                if row["name"] != "dep" and "inject" not in row:  # only a dependent can fail later
                    assert entry.fiber.state.name == "ACTIVE", "a failed row was committed"
        registry = self.loader.ctx.registry
        live = [f for rt in registry._runtimes.values() for f in rt.fibers
                if f.uid is not None and f is not self.loader._fiber]
        assert len(live) == sum(1 for _, _, m in expected if m)   # no leaked fibers
        for binding in registry.services.bindings.values():
            assert binding.fiber.uid is not None                  # no service of a dead fiber

    def teardown(self):
        if hasattr(self, "loop"):
            self.loop.run_until_complete(self.loader.stop())
            assert sum(1 for rt in self.loader.ctx.registry._runtimes.values() for f in rt.fibers
                       if f.uid is not None) == 0
            self.loop.close()


LoaderMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=10, deadline=None,
                                           suppress_health_check=[HealthCheck.too_slow])
test_random_edit_sequences = LoaderMachine.TestCase
