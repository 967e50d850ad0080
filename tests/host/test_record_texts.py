"""The last-good file written from kept row texts (lastgood.RecordTexts, issue 30) is byte for byte
the file written from scratch, whatever changed between records: values, key order, types, nested
group rows, relative plugin names and the files that declared them."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.yaml.nodes import JsExpr, YList, YMap
from dshctl.errors import Loc
from dshctl.host.lastgood import RecordTexts, record_text


def _ymap(pairs, file="/p/a/cordis.patch.yml"):
    m = YMap(loc=Loc(file, 1, 1))
    m.update(pairs)
    return m


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.sampled_from([0.0, -0.0, 1.0, 1]),
                    st.text(max_size=6), st.sampled_from(["\ud800x", "é", "./p.py"]),
                    st.text(max_size=8).map(JsExpr))
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=3).map(lambda items: YList(items, loc=Loc("f.yml", 2, 3))),
    st.dictionaries(st.text(max_size=4), kids, max_size=3).map(lambda d: _ymap(d.items()))), max_leaves=12)
files = st.sampled_from(["/p/a/cordis.patch.yml", "/p/b/x.yml", "rel/c.yml"])
names = st.sampled_from(["./plugins/noop.py", "../up.py", "@scope/pkg", "./a/../b.py"])


@st.composite
def rows(draw, depth=0):
    pairs = [("id", draw(st.text(max_size=3))), ("name", draw(names))]
    pairs += draw(st.lists(st.tuples(st.sampled_from(["config", "x", "disabled"]), values), max_size=2))
    if depth < 2 and draw(st.booleans()):
        pairs = [p for p in pairs if p[0] != "config"] + [("group", True),
                                                          ("config", YList(draw(st.lists(rows(depth + 1), max_size=2))))]
    if draw(st.booleans()):
        pairs.reverse()   # the same keys in another order is another file
    return _ymap(pairs, draw(files))


tree = st.lists(st.one_of(rows(), values), max_size=5)


@settings(max_examples=300, deadline=None)
@given(tree, tree, st.data())
def test_kept_texts_give_the_file_written_from_scratch(first, second, data):
    texts = RecordTexts()
    for current in (first, second, first + second, second):
        expected = record_text("p", current, "d1", "T")
        assert record_text("p", current, "d1", "T", texts) == expected
        json.loads(expected)
    if first and isinstance(first[0], dict):   # written into in place, as a plugin or the loader would
        first[0]["config"] = data.draw(values)
        first[0].loc = Loc(data.draw(files), 1, 1)
        assert record_text("p", first, "d1", "T", texts) == record_text("p", first, "d1", "T")
