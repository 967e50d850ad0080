"""The emitter's shortcuts (issue 13, profile dump) against its general path.

``_Writer.value`` dispatches on the exact type and remembers each (text, level) and key it wrote;
``write_scalar`` answers short plain-looking strings without ``choose_style``. Both must give the
bytes the general path gives; the js-yaml byte-for-byte tests (tests/test_emit_node.py) hold the
general path against js-yaml itself.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.yaml import emit, scalar_style
from dshctl.core.yaml.nodes import JsExpr, YList, YMap


class _GeneralOnly(emit._Writer):
    """The writer without its fast path: every node through ``general``, nothing remembered."""

    def value(self, level, value, compact, in_seq=False):
        return self.general(level, value, compact=compact, in_seq=in_seq)

    def mapping(self, level, mapping, compact):
        return self._ordered_mapping(level, mapping, compact)

    def sequence(self, level, items, compact):
        out = []
        for item in items:
            text = self.general(level + 1, item, compact=True, in_seq=True)
            if not compact or out:
                out.append("\n" + "  " * level)
            out.append(("-" if text.startswith("\n") else "- ") + text)
        return "".join(out)


_text = st.one_of(st.sampled_from(["id", "b0-r1", "@bench/x", "127.0.0.1", "true", "yes", "1e3", "0",
                                   "", "a: b", "x #y", "line\nbreak", "'q'", "2026-12-01", "<<",
                                   "a" * 90, "a b " * 30, "日本", "\U0001F600", "\t"]),
                  st.text(max_size=12))
_key = st.one_of(_text, st.sampled_from(["0", "1", "10", "4294967295", "a" * 1100]))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**60, 2**60), st.floats(allow_nan=True),
                    _text, _text.filter(bool).map(JsExpr))


def _as_nodes(value):
    if isinstance(value, dict):
        out = YMap()
        for k, v in value.items():
            out[k] = _as_nodes(v)
        return out
    if isinstance(value, list):
        return YList(_as_nodes(v) for v in value)
    return value


_tree = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_key, inner, max_size=4),
    st.lists(inner, max_size=4).map(_as_nodes), st.dictionaries(_key, inner, max_size=4).map(_as_nodes),
    _text.map(lambda t: {"__jsExpr": t})), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.lists(_tree, min_size=1, max_size=4), st.booleans(), st.booleans())
def test_the_fast_path_writes_what_the_general_path_writes(trees, no_array_indent, for_edit):
    fast = emit._Writer(no_array_indent, for_edit=for_edit)
    general = _GeneralOnly(no_array_indent, for_edit=for_edit)
    for tree in trees + trees:  # the second round is answered from the writer's memory
        assert fast.node(0, tree, compact=True) == general.node(0, tree, compact=True)


def test_one_writer_for_many_groups_writes_what_one_writer_each_does():
    rows = [{"id": f"r{i}", "name": "@scope/p", "config": {"port": 3000 + i, "tags": ["a", str(i)]}}
            for i in range(30)]
    groups = [rows[:10], rows[10:11], rows[11:]]
    dump_rows = emit.rows_dumper()
    assert [dump_rows(g) for g in groups] == [emit.dump_rows(g) for g in groups]


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="aZz09_./-eExX", min_size=1, max_size=45), st.integers(0, 12),
       st.booleans(), st.booleans(), st.booleans())
def test_short_plain_strings_are_styled_as_choose_style_decides(text, level, key, flow, default_schema):
    ambiguous = emit.looks_typed_default if default_schema else emit.looks_typed
    scalar_style.write_scalar.cache_clear()
    written = scalar_style.write_scalar(text, level, key=key, in_block=not flow, ambiguous=ambiguous,
                                        single_line=flow)
    if text in scalar_style._DEPRECATED_BOOLEANS or scalar_style._BASE60.fullmatch(text):
        assert written == f"'{text}'"
        return
    width = max(min(scalar_style.LINE_WIDTH, 40), scalar_style.LINE_WIDTH - 2 * max(1, level))
    style = scalar_style.choose_style(scalar_style.to_utf16(text), key or flow, width, ambiguous, not flow)
    assert (written == text) == (style == scalar_style.PLAIN)


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=0.0, exclude_min=True, allow_infinity=False, allow_nan=False))
def test_number_digits_from_repr_are_the_decimal_digits(f):
    from decimal import Decimal

    from dshctl.core.yaml.jsvalue import _shortest_digits

    _, digit_tuple, exponent = Decimal(repr(f)).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    assert _shortest_digits(f) == (digits.rstrip("0"), exponent + len(digits) - len(digits.rstrip("0")))
