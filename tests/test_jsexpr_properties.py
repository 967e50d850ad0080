"""Property tests for the !!js subset: random trees rendered to text, parsed back and evaluated, against
a separately written reference evaluator; and a differential test against Node itself."""
from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.core.jsexpr import (UNDEFINED, JsEnv, JsSyntaxError, evaluate, evaluate_config,
                                iter_expressions, parse)
from dshctl.core.jsexpr.ast import Conditional, Cwd, EnvVar, Equality, Literal, Logical, Not, Platform
from dshctl.core.yaml.nodes import JsExpr

ENVIRON = {"SET": "value", "EMPTY": "", "ZERO": "0"}
ENV = JsEnv(ENVIRON, "/cwd", "darwin", Path("/home"))

# -- trees ---------------------------------------------------------------------------------------

strings = st.text(alphabet="ab '\"\\\n$é0", max_size=6)
numbers = st.one_of(
    st.integers(min_value=-10**6, max_value=10**6),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(lambda f: not f.is_integer()),
)
leaves = st.one_of(
    strings.map(Literal), numbers.map(Literal),
    st.sampled_from([Literal(True), Literal(False), Literal(None), Literal(UNDEFINED), Cwd(), Platform()]),
    st.sampled_from(["SET", "EMPTY", "ZERO", "UNSET", "OTHER-NAME"]).map(EnvVar),
)


def _branches(children):
    return st.one_of(
        children.map(Not),
        st.builds(Logical, st.sampled_from(["||", "&&", "??"]), children, children),
        st.builds(Equality, st.sampled_from(["===", "!=="]), children, children),
        st.builds(Conditional, children, children, children),
    )


trees = st.recursive(leaves, _branches, max_leaves=12)

# -- rendering (minimal parentheses, optionally more) --------------------------------------------

COND, COALESCE, OR, AND, EQ, UNARY = 1, 2, 3, 4, 5, 6


def level(tree) -> int:
    if isinstance(tree, Conditional):
        return COND
    if isinstance(tree, Logical):
        return {"??": COALESCE, "||": OR, "&&": AND}[tree.op]
    if isinstance(tree, Equality):
        return EQ
    return UNARY


def render(tree, extra_parens=lambda: False) -> str:
    def sub(child, ok) -> str:
        text = render(child, extra_parens)
        return f"({text})" if not ok(level(child)) or extra_parens() else text

    if isinstance(tree, Literal):
        return render_literal(tree.value)
    if isinstance(tree, EnvVar):
        return f"process.env.{tree.name}" if tree.name.isidentifier() else f"process.env['{tree.name}']"
    if isinstance(tree, Cwd):
        return "process.cwd()"
    if isinstance(tree, Platform):
        return "process.platform"
    if isinstance(tree, Not):
        return "!" + sub(tree.operand, lambda lv: lv >= UNARY)
    if isinstance(tree, Equality):
        return f"{sub(tree.left, lambda lv: lv >= EQ)} {tree.op} {sub(tree.right, lambda lv: lv > EQ)}"
    if isinstance(tree, Logical):
        if tree.op == "??":  # operands may not be bare || or && chains
            left_ok = lambda lv: lv in (COALESCE, EQ, UNARY)  # noqa: E731
            return f"{sub(tree.left, left_ok)} ?? {sub(tree.right, lambda lv: lv >= EQ)}"
        mine = level(tree)
        return (f"{sub(tree.left, lambda lv: lv >= mine)} {tree.op} "
                f"{sub(tree.right, lambda lv: lv > mine)}")
    return (f"{sub(tree.test, lambda lv: lv > COND)} ? {sub(tree.then, lambda lv: True)} : "
            f"{sub(tree.otherwise, lambda lv: True)}")


def render_literal(value) -> str:
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        quote = '"' if "'" in value and '"' not in value else "'"
        body = value.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
        return quote + body + quote
    return repr(value)


def shape(tree):
    """A structural dump that keeps literal types apart (True == 1 in Python, not in JavaScript)."""
    if isinstance(tree, Literal):
        return ("Literal", type(tree.value).__name__, tree.value)
    if is_dataclass(tree):
        return (type(tree).__name__, *(shape(getattr(tree, f.name)) for f in fields(tree)))
    return tree


# -- reference semantics, written independently over tagged values --------------------------------

def tag(value):
    if value is UNDEFINED:
        return ("undefined",)
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    return ("string", value)


def ref_falsy(t) -> bool:
    return t in (("undefined",), ("null",), ("boolean", False), ("string", "")) or \
        (t[0] == "number" and (t[1] == 0 or t[1] != t[1]))


def ref_eval(tree):
    if isinstance(tree, Literal):
        return tag(tree.value)
    if isinstance(tree, EnvVar):
        return ("string", ENVIRON[tree.name]) if tree.name in ENVIRON else ("undefined",)
    if isinstance(tree, Cwd):
        return ("string", ENV.cwd)
    if isinstance(tree, Platform):
        return ("string", ENV.platform)
    if isinstance(tree, Not):
        return ("boolean", ref_falsy(ref_eval(tree.operand)))
    if isinstance(tree, Equality):
        a, b = ref_eval(tree.left), ref_eval(tree.right)
        same = a == b and not (a[0] == "number" and a[1] != a[1])
        return ("boolean", same if tree.op == "===" else not same)
    if isinstance(tree, Conditional):
        return ref_eval(tree.otherwise if ref_falsy(ref_eval(tree.test)) else tree.then)
    left = ref_eval(tree.left)
    if tree.op == "??":
        return ref_eval(tree.right) if left[0] in ("undefined", "null") else left
    if tree.op == "||":
        return ref_eval(tree.right) if ref_falsy(left) else left
    return left if ref_falsy(left) else ref_eval(tree.right)


# -- properties ----------------------------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(trees, st.randoms(use_true_random=False))
def test_render_parse_roundtrip_and_reference_evaluation(tree, rnd):
    text = render(tree, lambda: rnd.random() < 0.15)
    parsed = parse(text)
    assert shape(parsed) == shape(tree), text
    assert tag(evaluate(parsed, ENV)) == ref_eval(tree), text


@settings(max_examples=200, deadline=None)
@given(trees, trees, trees, st.sampled_from(["||", "&&"]))
def test_unparenthesized_nullish_mix_is_always_refused(a, b, c, op):
    parts = [f"({render(t)})" for t in (a, b, c)]
    for text in (f"{parts[0]} ?? {parts[1]} {op} {parts[2]}", f"{parts[0]} {op} {parts[1]} ?? {parts[2]}"):
        with pytest.raises(JsSyntaxError, match="cannot be mixed"):
            parse(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="()!?:|&=.'\"ab1 -", max_size=14))
def test_arbitrary_text_either_parses_or_raises_a_located_syntax_error(text):
    try:
        parse(text)
    except JsSyntaxError as err:
        assert 1 <= err.column <= len(text) + 1


# -- differential test against Node (one subprocess for the whole batch) --------------------------

TRICKY = [
    "0 === -0", "'' ?? 1", "!'0'", "null ?? undefined ?? 0", "1e400 === 1e401", "0x10 === 16",
    ".5 === 0.5", "1_000 === 1000", "1. === 1", "0b11 === 3", "0o7 === 7", "'a\\nb' === \"a\\nb\"",
    "!!'' || 'x' && 0", "true ? false ? 1 : 2 : 3", "null === undefined", "1 === true",
    "(1 ?? 2) || 3", "1 ?? (2 || 3)", "!null === !undefined", "9007199254740993 === 9007199254740992",
    "'\\\\'", "undefined ?? null", "0 || '' || null", "1 && 'a' && 0 && 2",
]
# SyntaxErrors in (strict-mode) JavaScript too
MUST_FAIL = ["1 ?? 2 || 3", "1 || 2 ?? 3", "1 && 2 ?? 3", "1 ?? 2 && 3", "08", "'a", "(1", "1 ? 2"]


def _random_tree(rnd: random.Random, depth: int):
    if depth == 0 or rnd.random() < 0.3:
        choice = rnd.randrange(4)
        if choice == 0:
            return Literal(rnd.choice(["", "a", "0", "it's", 'q"q', "x\\y"]))
        if choice == 1:
            return Literal(rnd.choice([0, 1, -1, 2.5, -0.5, 1e21, 3]))
        return Literal(rnd.choice([True, False, None, UNDEFINED]))
    kind = rnd.randrange(4)
    sub = lambda: _random_tree(rnd, depth - 1)  # noqa: E731
    if kind == 0:
        return Not(sub())
    if kind == 1:
        return Logical(rnd.choice(["||", "&&", "??"]), sub(), sub())
    if kind == 2:
        return Equality(rnd.choice(["===", "!=="]), sub(), sub())
    return Conditional(sub(), sub(), sub())


NODE_SCRIPT = r"""
const exprs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = exprs.map((e) => {
  try {
    const v = new Function('"use strict"; return (' + e + '\n)')();
    if (v === undefined) return { t: 'undefined' };
    if (typeof v === 'number') return { t: 'number', v: Number.isNaN(v) ? 'NaN' : String(v) };
    return { t: v === null ? 'null' : typeof v, v };
  } catch (err) { return { t: 'error', v: err.name }; }
});
process.stdout.write(JSON.stringify(out));
"""


def _python_result(expr: str):
    try:
        value = evaluate(parse(expr), ENV)
    except JsSyntaxError:
        return {"t": "error", "v": "SyntaxError"}
    t = tag(value)
    if t[0] == "undefined":
        return {"t": "undefined"}
    return {"t": t[0], "v": None if t[0] == "null" else t[1]}


def test_evaluator_agrees_with_node():
    # Never a skip: the dev machines and CI have Node; a missing one must turn the run red.
    assert shutil.which("node"), "this differential test needs Node on PATH"
    rnd = random.Random(20261129)
    batch = TRICKY + MUST_FAIL + [render(_random_tree(rnd, 4), lambda: rnd.random() < 0.1)
                                  for _ in range(600)]
    proc = subprocess.run(["node", "-e", NODE_SCRIPT], input=json.dumps(batch), capture_output=True,
                          text=True, timeout=60, check=True)
    kinds: dict[str, int] = {}  # the batch must exercise every result type, not only errors
    for expr, node in zip(batch, json.loads(proc.stdout), strict=True):
        ours = _python_result(expr)
        if node["t"] == "number":
            node = {"t": "number", "v": float(node["v"]) if node["v"] != "NaN" else math.nan}
        assert ours == node, expr
        kinds[node["t"]] = kinds.get(node["t"], 0) + 1
    assert min(kinds.get(t, 0) for t in ("number", "string", "boolean", "null", "undefined")) >= 10
    assert all(_python_result(e)["t"] == "error" for e in MUST_FAIL)


# -- evaluate_config over random config values ----------------------------------------------------

EXPR_LEAVES = {"process.env.SET": "value", "process.env.UNSET": UNDEFINED, "null": None,
               "process.env.ZERO === '0'": True}
configs = st.recursive(
    st.one_of(st.integers(), st.text(max_size=3), st.none(),
              st.sampled_from(sorted(EXPR_LEAVES)).map(JsExpr)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(alphabet="abc", max_size=2), children, max_size=4)),
    max_leaves=20,
)


def expected_config(value):
    if isinstance(value, JsExpr):
        return EXPR_LEAVES[value.expr]
    if isinstance(value, dict):
        out = {k: expected_config(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not UNDEFINED}
    if isinstance(value, list):
        return [None if (r := expected_config(v)) is UNDEFINED else r for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(configs)
def test_evaluate_config_matches_a_direct_substitution(config):
    result = evaluate_config(config, ENV, full_id="r", name="n")
    assert result == expected_config(config)
    if not list(iter_expressions(config, "config")):
        assert result is config  # nothing to evaluate: not copied
