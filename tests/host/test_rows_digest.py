"""The host's rows digest (unchanged-reload detection, last-good records) encodes the loaded nodes
directly; it must give exactly the digest of the plain rows, as records written before did."""
from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.yaml.nodes import JsExpr, YList, YMap, to_plain
from dshctl.errors import Loc
from dshctl.host.lastgood import row_text, rows_digest, texts_digest


def reference(rows) -> str:
    text = json.dumps(to_plain(rows), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _ymap(pairs):
    m = YMap(loc=Loc("f.yml", 1, 1))
    m.update(pairs)
    return m


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                    st.text(max_size=12).map(JsExpr))
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=4).map(lambda items: YList(items, loc=Loc("f.yml", 2, 3))),
    st.lists(kids, max_size=4),
    st.dictionaries(st.text(max_size=6), kids, max_size=4).map(lambda d: _ymap(d.items())),
    st.dictionaries(st.text(max_size=6), kids, max_size=4)), max_leaves=30)


@settings(max_examples=300)
@given(st.lists(values, max_size=6))
def test_digest_equals_the_digest_of_the_plain_rows(rows):
    assert rows_digest(rows) == reference(rows)


@settings(max_examples=300)
@given(st.lists(values, max_size=6))
def test_digest_from_per_row_texts_is_the_digest_of_the_list(rows):
    """The host digests a reload from cached per-row texts (composer.py): it must be the same."""
    assert texts_digest([row_text(r) for r in rows]) == rows_digest(rows)


def test_digest_tells_rows_apart():
    a = [_ymap({"id": "x", "config": _ymap({"n": 1})})]
    b = [_ymap({"id": "x", "config": _ymap({"n": 2})})]
    c = [_ymap({"id": "x", "config": _ymap({"n": JsExpr("1")})})]
    assert len({rows_digest(a), rows_digest(b), rows_digest(c)}) == 3
