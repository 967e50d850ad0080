"""Property test for includes: random file contents (valid, failing, broken) refreshed one after
another; the subtree always equals the last content that applied, never a mix."""
from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from dshctl.core.yaml.emit import dump_rows
from dshctl.loader import LoaderError

from .helpers import Log, Recorder, make_loader

BROKEN = ["- {id: a, name: p, config: [\n", "id: a\n", "", "- 3\n", "- {id: a}\n"]


@st.composite
def contents(draw):
    if draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(BROKEN)), None
    ids = draw(st.lists(st.sampled_from("abcd"), unique=True, max_size=4))
    rows = [{"id": i, "name": "p", "config": draw(st.sampled_from([0, 1, {"fail": True}]))} for i in ids]
    return dump_rows(rows), rows


class IncludeMachine(RuleBasedStateMachine):
    @initialize()
    def boot(self):
        self.loop = asyncio.new_event_loop()
        self.dir = Path(tempfile.mkdtemp(prefix="dshctl-include-"))
        (self.dir / "t.yml").write_text("[]\n")
        self.loader = make_loader(Log(), Recorder("p", Log()))
        row = {"id": "inc", "name": "cordis:include", "config": {"path": "t.yml"}}
        self.loop.run_until_complete(self.loader.start([row], base_dir=self.dir))
        self.good: list = []

    @rule(content=contents())
    def save_and_refresh(self, content):
        text, rows = content
        (self.dir / "t.yml").write_text(text)
        include = self.loader.resolve("inc").subtree.source
        try:
            self.loop.run_until_complete(asyncio.wait_for(include.refresh(), 20))
        except LoaderError:
            assert rows is None or any(isinstance(r["config"], dict) for r in rows)
            return
        assert rows is not None and not any(isinstance(r["config"], dict) for r in rows)
        self.good = rows

    @invariant()
    def subtree_is_the_last_good_content(self):
        if not hasattr(self, "loader"):
            return
        entries = self.loader.resolve("inc").subtree.order()
        assert [(e.id, e.options["config"]) for e in entries] == [(r["id"], r["config"]) for r in self.good]
        assert all(e.fiber is not None and e.fiber.state.name == "ACTIVE" for e in entries)
        live = [f for rt in self.loader.ctx.registry._runtimes.values() for f in rt.fibers
                if f.uid is not None and f.name == "p"]
        assert len(live) == len(self.good)

    def teardown(self):
        if hasattr(self, "loop"):
            self.loop.run_until_complete(self.loader.stop())
            self.loop.close()
            shutil.rmtree(self.dir, ignore_errors=True)


IncludeMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=8, deadline=None,
                                            suppress_health_check=[HealthCheck.too_slow])
test_include_refresh_sequences = IncludeMachine.TestCase
