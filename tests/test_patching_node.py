"""Differential test: dshctl's YAML dialect and patch pass against real JavaScript, in Node.

Random layer stacks are generated as YAML TEXT and given to both sides:

* Node parses each layer with js-yaml 4 (``JSON_SCHEMA`` plus a ``!!js`` scalar type that loads as
  ``{__jsExpr: text}``, as dsh does) and composes the layers with ``tests/node/patch_reference.mjs``,
  our own model of dsh's ``applyEntryPatches``, running on js-yaml's objects;
* dshctl parses with ``dialect.load_yaml`` and composes with ``patching.apply_patches``.

Compared per stack: every layer's parsed value (or both fail), then the composed rows (values, number
kinds as doubles, NaN/Infinity, and key ORDER) and the ordered warnings with their layer (or both
throw). One long-lived ``node`` process answers all examples over JSON lines.

js-yaml comes from npm into a cache directory (``~/.cache/dshctl-test-node``, reused when present).
Node and the npm registry are a requirement of this test: without them it fails, it never skips.
"""
from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.yaml.nodes import to_plain
from dshctl.core.compose.patching import Patch, PatchError, apply_patches
from dshctl.errors import ParseError
from node_oracle import NodeOracle



# ---------------------------------------------------------------------------------------------
# Node with js-yaml 4


@pytest.fixture(scope="session")
def node(js_yaml_prefix):
    oracle = NodeOracle(js_yaml_prefix)
    yield oracle
    oracle.close()


# ---------------------------------------------------------------------------------------------
# comparable values: doubles for every number, NaN/Infinity kept apart from null, key order kept

_INDEX_KEY = re.compile(r"(?:0|[1-9][0-9]*)\Z")


def js_key_order(keys: list[str]) -> list[str]:
    """JavaScript's own-key order (array indices ascending first); written independently of dshctl."""
    index = sorted((k for k in keys if _INDEX_KEY.match(k) and int(k) < 2**32 - 1), key=int)
    return index + [k for k in keys if k not in set(index)]


def _number(value: int | float) -> tuple:
    try:
        f = float(value)
    except OverflowError:  # an integer beyond any double is Infinity in JavaScript
        f = math.inf if value > 0 else -math.inf
    if math.isnan(f):
        return ("num", "NaN")
    if math.isinf(f):
        return ("num", "Infinity" if f > 0 else "-Infinity")
    return ("num", f)  # -0.0 == 0.0, as JSON.stringify(-0) is "0"


def canon(value, *, order_keys: bool = False):
    """A comparable form. ``order_keys`` applies JavaScript key order (for dshctl's parse tree, which
    keeps file order for its positions; the patcher's clone orders keys itself)."""
    if isinstance(value, dict):
        if list(value) == ["$nonfinite"]:
            return ("num", value["$nonfinite"])
        keys = js_key_order(list(value)) if order_keys else list(value)
        return ("obj", tuple((k, canon(value[k], order_keys=order_keys)) for k in keys))
    if isinstance(value, list):
        return ("arr", tuple(canon(v, order_keys=order_keys) for v in value))
    if isinstance(value, bool) or value is None:
        return ("lit", value)
    if isinstance(value, (int, float)):
        return _number(value)
    assert isinstance(value, str), type(value)
    return ("str", value)


# ---------------------------------------------------------------------------------------------
# the generator: YAML text built from tokens (each valid in flow context, except RARE_SCALARS and
# BROKEN, which check that both parsers refuse the same texts)

IDS = ["a"] * 4 + ["g"] * 3 + ["b", "h", "''", '""', "0", "7", "'7'", "7.0", "0x7", "true", "null",
                               "~", "ü", "'a'", ".nan", ".inf"]
NAMES = ["A"] * 3 + ["1", "true", "B", "''", "cordis:group", "0", "null", "'A'", "[A]", "{n: 1}", "Ä"]
GROUPS = ["true"] * 3 + ["false", "1", "0", "null", "'x'", "''", "TRUE"]
DISABLED = ["true", "false", "0", "1", "null", "'yes'", "!!js a === 1",
            "!!js \"process.platform === 'win32' ? 1 : 0\"", "!!js 'x'"]
FALSY_INSERTS = ["[]", "null", "0", "false", "''", "~", ".nan"]
ODD_INSERTS = ["'ab'", "5", "{id: a}"]  # JavaScript spreads the string; the others throw
SCALARS = [
    "yes", "on", "no", "Off", "0o17", "010", "1e3", ".5", "-.5", "+.5", "~", "0x1F", "+1", "-0",
    ".inf", "-.inf", "+.inf", ".NaN", "2026-01-01", "2026-01-01T10:00:00Z", "1_000", "0b101", "1.",
    "1.e3", "12345678901234567890", "1e400", "0.1e-7", "1e21", "08", "true", "False", "NULL", "null",
    "''", '""', "'it''s'", '"tab\\there"', '"\\u00e9\\u263a \\U0001F600"', "héllo", "日本語",
    "'yes'", '"010"', "!!str 010", "!!int 0x1F", "!!float 7", "!!float 1e3", "!!bool TRUE",
    "!!null ~", "!!js a && b", "!!js process.env.PORT ?? 3080", "x:y", "a b", "<<",
    "'#x'", "=", "-x", "?x", "a?", "0o8", "0xG", "+0", "-0x1F", "1e+3", "1E-3",
]
RARE_SCALARS = ["?", "-", "!!str", "[-]", "[?x]", "{? a}"]  # flow-context edge cases; some fail
# (YAML text of a key, the JavaScript property name it becomes): keys unique by the latter.
KEYS = [("x", "x"), ("y", "y"), ("'1'", "1"), ("2", "2"), ("10", "10"), ("02", "2"),
        ("null", "null"), ("true", "true"), ("é", "é"), ("__proto__", "__proto__"), ("-1", "-1"),
        ("4294967295", "4294967295"), ("4294967294", "4294967294"), ("1.0", "1"), ("1e3", "1000"),
        (".5", "0.5"), ("''", "")]
ROW_EXTRA_KEYS = [("z", "z"), ("'3'", "3"), ("0", "0"), ("inject", "inject"),
                  ("isolate", "isolate")]
PROTO_SCALARS = [t for t in SCALARS if not t.startswith("!!js")]
BROKEN = ["- {a: 1, a: 2}\n", "- {a: 1, '1': 2, 1: 3}\n", "- {x: !custom 1}\n",
          "- {x: !!timestamp 2026-01-01}\n", "- [a, b\n", "- {x: *nope}\n", "- a\n---\n- b\n",
          "- {x: !!int 1.5}\n", "- {x: !!js {a: 1}}\n", "- {x: &a [1], y: *a}\n", "\t- a\n",
          "", "# only a comment\n", "- {x: 1_000, y: !!int 1_0}\n", "- !!binary aGk=\n",
          "- {x: \"\\x41\\q\"}\n", "- {x: !!js }\n"]


def flow_map(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True about once in ``n`` draws (``st.integers`` would favour its bounds)."""
    return st.sampled_from([True] + [False] * (n - 1))


def scalars() -> st.SearchStrategy[str]:
    """Mostly SCALARS; a rare token about once in 250 draws, so that most layers still parse."""
    return st.sampled_from(SCALARS * 16 + RARE_SCALARS)


def values(depth: int = 2) -> st.SearchStrategy[str]:
    scalar = scalars()
    if depth == 0:
        return scalar
    inner = values(depth - 1)
    return st.one_of(
        scalar,
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3,
                 unique_by=lambda kv: kv[0][1]).map(
            lambda kvs: flow_map([(k[0], v) for k, v in kvs])),
    )


def _optional(key: str, strategy) -> st.SearchStrategy[list]:
    return st.one_of(st.just([]), strategy.map(lambda v: [(key, v)]))


@st.composite
def rows(draw, depth: int = 1) -> str:
    """One entry-list row in flow style; a group row may carry nested rows as its config."""
    pairs = [] if draw(one_in(5)) else [("id", draw(st.sampled_from(IDS)))]
    pairs += draw(_optional("name", st.sampled_from(NAMES)))
    pairs += draw(_optional("group", st.sampled_from(GROUPS)))
    pairs += draw(_optional("disabled", st.sampled_from(DISABLED)))
    nested = st.lists(rows(depth - 1), max_size=2).map(lambda r: "[" + ", ".join(r) + "]")
    pairs += draw(_optional("config", st.one_of(values(), nested) if depth > 0 else values()))
    extra = draw(st.lists(st.tuples(st.sampled_from(ROW_EXTRA_KEYS + [("__proto__", "__proto__")]),
                                    values(1)), max_size=1,
                          unique_by=lambda kv: kv[0][1]))
    return flow_map(draw(st.permutations(pairs + [(k[0], v) for k, v in extra])))


ROW_LIST = st.lists(rows(), min_size=1, max_size=3).map(lambda r: "[" + ", ".join(r) + "]")


@st.composite
def patches(draw) -> list[tuple[str, str]]:
    """One patch mapping as (key, value) pairs: an insert (root or group) or an override."""
    if draw(st.booleans()):
        kind = draw(st.sampled_from(["odd"] + ["falsy"] * 2 + ["rows"] * 12))
        inserted = draw(st.sampled_from(ODD_INSERTS) if kind == "odd"
                        else st.sampled_from(FALSY_INSERTS) if kind == "falsy" else ROW_LIST)
        into_group = draw(one_in(3))
        pairs = [("insert", inserted)] + ([("id", draw(st.sampled_from(IDS)))] if into_group else [])
        pairs += draw(_optional("name", st.sampled_from(NAMES)))  # ignored by an insert
        pairs += draw(_optional("disabled", st.sampled_from(DISABLED)))
    else:
        pairs = [] if draw(one_in(8)) else [("id", draw(st.sampled_from(IDS)))]
        pairs += draw(_optional("name", st.sampled_from(NAMES)))
        for key, strategy in (("disabled", st.sampled_from(DISABLED)),
                              ("group", st.sampled_from(GROUPS)),
                              ("config", st.one_of(values(), ROW_LIST)),
                              ("insert", st.sampled_from(FALSY_INSERTS))):
            pairs += draw(_optional(key, strategy))
        extra = draw(st.lists(st.tuples(st.sampled_from(ROW_EXTRA_KEYS), values(1)), max_size=2,
                              unique_by=lambda kv: kv[0][1]))
        pairs += [(k[0], v) for k, v in extra]
        # JavaScript ignores `row.__proto__ = <scalar>` unless the row has its own `__proto__`; an
        # object would become the row's prototype, which dshctl does not model (docs/compose.md).
        pairs += draw(_optional("__proto__", st.sampled_from(PROTO_SCALARS)))
    return draw(st.permutations(pairs))


def render_block(patch: list[tuple[str, str]]) -> str:
    if not patch:
        return "- {}\n"
    lines = [f"{k}: {v}" for k, v in patch]
    return "- " + "\n  ".join(lines) + "\n"


def _share_inserted_rows(items: list, group_id: str | None) -> list:
    """Anchor the first inserted row list and insert it again through an alias: both places then
    hold the same objects, so a later override or group insert shows through both (by reference,
    as in dsh; structuredClone keeps the sharing)."""
    items = [list(patch) for patch in items]
    for patch in items:
        for pos, (key, value) in enumerate(patch):
            if key == "insert" and value.startswith("["):
                patch[pos] = (key, "&rows " + value)
                again = [("insert", "*rows")] + ([("id", group_id)] if group_id else [])
                return items + [again]
    return items


@st.composite
def layers(draw) -> str:
    if draw(one_in(20)):
        return draw(st.sampled_from(BROKEN))
    items = draw(st.lists(patches(), min_size=1, max_size=4))
    if draw(one_in(5)):
        items = _share_inserted_rows(items, draw(st.sampled_from(IDS + [None])))
    if draw(st.booleans()):
        return "[" + ", ".join(flow_map(p) for p in items) + "]\n"
    return "".join(render_block(p) for p in items) or "[]\n"


STACKS = st.lists(layers(), min_size=1, max_size=4)


# ---------------------------------------------------------------------------------------------
# dshctl's side


def dshctl_parse(text: str) -> dict:
    try:
        doc = load_yaml(text, "layer.yml")
    except ParseError as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True, "value": None if doc.empty else doc.value}


def dshctl_compose(values_: list) -> dict:
    plist = [Patch(v, f"layer{i}", i) for i, layer in enumerate(values_) for v in layer]
    try:
        result = apply_patches([], plist)
    except PatchError as exc:
        return {"ok": False, "error": str(exc)}
    warnings = [[int(w.layer[len("layer"):]), w.message] for w in result.warnings]
    return {"ok": True, "rows": canon(to_plain(result.rows)), "warnings": warnings}


def compare_stack(node: NodeOracle, texts: list[str]) -> None:
    js = node.ask(texts)
    parsed = [dshctl_parse(t) for t in texts]
    for i, (py, jsp) in enumerate(zip(parsed, js["parsed"])):
        where = f"layer {i}:\n{texts[i]}"
        assert py["ok"] == jsp["ok"], f"parse verdicts differ on {where}\ndshctl: {py}\njs-yaml: {jsp}"
        if py["ok"]:
            expected = canon(json.loads(jsp["value"])) if "value" in jsp else ("lit", None)
            got = canon(to_plain(py["value"]), order_keys=True)
            assert got == expected, f"parsed values differ on {where}"
    if "composed" not in js:
        assert not all(p["ok"] and isinstance(p["value"], list) for p in parsed)
        return
    mine = dshctl_compose([p["value"] for p in parsed])
    theirs = js["composed"]
    shown = "\n---- next layer ----\n".join(texts)
    assert mine["ok"] == theirs["ok"], f"only one side threw on:\n{shown}\n{mine}\n{theirs}"
    if mine["ok"]:
        assert mine["warnings"] == theirs["warnings"], f"warnings differ on:\n{shown}"
        assert mine["rows"] == canon(json.loads(theirs["rows"])), f"rows differ on:\n{shown}"


# ---------------------------------------------------------------------------------------------
# the tests


def test_node_oracle_sees_js_yaml_4_json_schema(node):
    """The oracle itself: JSON_SCHEMA typing and the !!js type, as dsh-config.md §3 states them."""
    answer = node.ask(["[yes, 010, 0o17, 1_000, .inf, !!js a && b]\n"])
    assert json.loads(answer["parsed"][0]["value"]) == [
        "yes", 10, 15, "1_000", {"$nonfinite": "Infinity"}, {"__jsExpr": "a && b"}]


def test_known_stack_matches_node(node):
    """A hand-written stack through every warning and an index-key reordering, both sides."""
    compare_stack(node, [
        "- insert: [{id: g, name: cordis:group, group: true, config: {not: a list}}]\n"
        "- {id: g, insert: [{id: c, name: C, config: {b: 1, 2: x}}]}\n"
        "- {id: c, '1': one, name: C}\n",
        "- {id: c, name: D}\n- {id: 7}\n- {id: '7', insert: [{}]}\n- {id: c, insert: [x]}\n"
        "- {disabled: true}\n- {id: c, insert: null, disabled: !!js a === 1}\n",
    ])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(stack=STACKS)
def test_random_stacks_match_javascript(node, stack):
    compare_stack(node, stack)
