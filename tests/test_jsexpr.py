"""The !!js subset: every grammar form and atom, JavaScript semantics, error texts, config walking."""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from dshctl.core.yaml.dialect import load_yaml
from dshctl.core.jsexpr import (UNDEFINED, JsEnv, JsEvalError, JsSyntaxError, check_expressions,
                                eval_failed_message, evaluate, evaluate_config, node_platform, parse,
                                strict_equals, truthy, unsupported_message)
from dshctl.core.jsexpr.ast import (Conditional, CtxGet, CtxService, Cwd, EnvVar, Equality,
                                    HomePath, Literal, Logical, Member, Not, Platform)
from dshctl.core.yaml.nodes import JsExpr, YMap
from dshctl.errors import DshctlError, Loc


class Service:
    """A service object exposing attributes (as a Python plugin's service would)."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)
        self._secret = "hidden"


WEB = Service(port=8080, host=None, nested={"a": {"b": "deep"}})


def make_env(*, environ=None, injected=None, services=None, platform="linux") -> JsEnv:
    services = {"webStartup": WEB, "cfg": {"mode": "fast", "empty": ""}} if services is None else services
    return JsEnv(environ={"HOME": "/home/u", "EMPTY": "", "PORT": "3000"} if environ is None else environ,
                 cwd="/work/dir", platform=platform, home=Path("/home/u/.dsh"),
                 get_service=services.get, injected=injected)


def ev(expr: str, **kw):
    return evaluate(parse(expr), make_env(**kw))


# -- atoms ------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, tree", [
    ("'it\\'s'", Literal("it's")),
    ('"say \\"hi\\""', Literal('say "hi"')),
    ("'a\\\\b\\nc'", Literal("a\\b\nc")),
    ("'dq \" inside'", Literal('dq " inside')),
    ("42", Literal(42)),
    ("3.5", Literal(3.5)),
    (".5", Literal(0.5)),
    ("1e3", Literal(1000)),
    ("0x1F", Literal(31)),
    ("0o17", Literal(15)),
    ("0b101", Literal(5)),
    ("1_000", Literal(1000)),
    ("-7", Literal(-7)),
    ("true", Literal(True)),
    ("false", Literal(False)),
    ("null", Literal(None)),
    ("undefined", Literal(UNDEFINED)),
    ("process.env.DSH_MODEL", EnvVar("DSH_MODEL")),
    ("process.env['DSH-MODEL']", EnvVar("DSH-MODEL")),
    ('process.env["X"]', EnvVar("X")),
    ("process.cwd()", Cwd()),
    ("process.platform", Platform()),
    ("dshHomePath('sessions')", HomePath(("sessions",))),
    ("dshHomePath('a', \"b\",)", HomePath(("a", "b"))),
    ("dshHomePath()", HomePath(())),
    ("ctx.get('svc')", CtxGet("svc")),
    ("ctx.webStartup", CtxService("webStartup")),
    ("ctx.webStartup.port", Member(CtxService("webStartup"), "port")),
    ("ctx.get('a').b.c", Member(Member(CtxGet("a"), "b"), "c")),
    ("  \n process.platform\n", Platform()),
])
def test_every_atom_parses_to_its_node(expr, tree):
    assert parse(expr) == tree


def test_atoms_evaluate_against_the_environment():
    assert ev("process.env.PORT") == "3000"
    assert ev("process.env['HOME']") == "/home/u"
    assert ev("process.env.UNSET") is UNDEFINED
    assert ev("process.cwd()") == "/work/dir"
    assert ev("process.platform", platform="win32") == "win32"
    assert ev("dshHomePath('sessions', 'x')") == "/home/u/.dsh/sessions/x"
    assert ev("dshHomePath('a', '/b', '../c')") == "/home/u/.dsh/a/c"  # Node's path.join
    assert ev("dshHomePath()") == "/home/u/.dsh"
    assert ev("ctx.get('webStartup')") is WEB
    assert ev("ctx.get('missing')") is UNDEFINED
    assert ev("ctx.get('cfg').mode") == "fast"
    assert ev("ctx.get('webStartup').nested.a.b") == "deep"
    assert ev("ctx.webStartup.port", injected={"webStartup": WEB}) == 8080
    assert ev("ctx.webStartup.host", injected={"webStartup": WEB}) is None
    assert ev("ctx.webStartup.nope", injected={"webStartup": WEB}) is UNDEFINED
    assert ev("ctx.webStartup._secret", injected={"webStartup": WEB}) is UNDEFINED


def test_number_literals_are_javascript_doubles():
    assert ev("9007199254740993") == 9007199254740992  # beyond 2**53, rounded like a double
    assert ev("1e400") == math.inf
    assert ev("1.0") == 1 and isinstance(ev("1.0"), int)  # integral doubles come out as ints


def test_without_a_runtime_ctx_get_is_undefined():
    env = JsEnv({}, "/", "linux", Path("/h"))
    assert evaluate(parse("ctx.get('x') ?? 'fallback'"), env) == "fallback"


def test_node_platform_names():
    assert node_platform("linux") == "linux"
    assert node_platform("darwin") == "darwin"
    assert node_platform("win32") == "win32"
    assert node_platform("cygwin") == "win32"
    assert node_platform("freebsd14") == "freebsd"
    assert node_platform("sunos5") == "sunos"


def test_current_env_reads_this_process(tmp_path):
    env = JsEnv.current(tmp_path)
    assert env.cwd == os.getcwd()
    assert env.environ.get("PATH") == os.environ.get("PATH")
    assert env.home == tmp_path and env.injected is None


# -- operators, precedence, associativity -------------------------------------------------------

A, B, C, D, E = (EnvVar(n) for n in "ABCDE")


@pytest.mark.parametrize("expr, tree", [
    ("process.env.A ? process.env.B : process.env.C", Conditional(A, B, C)),
    ("process.env.A ? process.env.B : process.env.C ? process.env.D : process.env.E",
     Conditional(A, B, Conditional(C, D, E))),
    ("process.env.A ? process.env.B ? process.env.C : process.env.D : process.env.E",
     Conditional(A, Conditional(B, C, D), E)),
    ("process.env.A || process.env.B && process.env.C",
     Logical("||", A, Logical("&&", B, C))),
    ("process.env.A && process.env.B || process.env.C",
     Logical("||", Logical("&&", A, B), C)),
    ("process.env.A || process.env.B || process.env.C",
     Logical("||", Logical("||", A, B), C)),
    ("process.env.A ?? process.env.B ?? process.env.C",
     Logical("??", Logical("??", A, B), C)),
    ("process.env.A ?? (process.env.B || process.env.C)",
     Logical("??", A, Logical("||", B, C))),
    ("(process.env.A && process.env.B) ?? process.env.C",
     Logical("??", Logical("&&", A, B), C)),
    ("process.env.A === process.env.B === process.env.C",
     Equality("===", Equality("===", A, B), C)),
    ("process.env.A ?? process.env.B === process.env.C",
     Logical("??", A, Equality("===", B, C))),
    ("!process.env.A === process.env.B", Equality("===", Not(A), B)),
    ("!!process.env.A", Not(Not(A))),
    ("!(process.env.A || process.env.B)", Not(Logical("||", A, B))),
    ("process.env.A ?? process.env.B ? process.env.C : process.env.D",
     Conditional(Logical("??", A, B), C, D)),
    ("process.env.A !== 'x' && process.env.B",
     Logical("&&", Equality("!==", A, Literal("x")), B)),
    ("((process.env.A))", A),
])
def test_precedence_and_associativity(expr, tree):
    assert parse(expr) == tree


@pytest.mark.parametrize("expr", [
    "process.env.A ?? process.env.B || process.env.C",
    "process.env.A || process.env.B ?? process.env.C",
    "process.env.A ?? process.env.B && process.env.C",
    "process.env.A && process.env.B ?? process.env.C",
    "process.env.A ?? process.env.B ?? process.env.C || process.env.D",
])
def test_mixing_nullish_with_logical_needs_parentheses(expr):
    with pytest.raises(JsSyntaxError, match=r"'\?\?' cannot be mixed with '\|\|' or '&&'"):
        parse(expr)


TRUTHINESS = [
    ("''", False), ("'0'", True), ("' '", True), ("0", False), ("-0", False), ("0.0", False),
    ("1", True), ("-1", True), ("true", False), ("false", False), ("null", False),
    ("undefined", False), ("process.env.EMPTY", False), ("process.env.UNSET", False),
    ("process.env.PORT", True), ("ctx.get('cfg')", True), ("ctx.get('cfg').empty", False),
]


@pytest.mark.parametrize("atom, is_truthy", TRUTHINESS)
def test_truthiness_table(atom, is_truthy):
    # `true` is truthy; the table is written with it negated to exercise `!` on booleans too
    expected = (not is_truthy) if atom == "true" else is_truthy
    assert ev(f"!{atom}") is (not expected)
    assert ev(f"{atom} ? 'yes' : 'no'") == ("yes" if expected else "no")


def test_truthiness_of_python_values():
    assert [truthy(v) for v in (math.nan, 0, 0.0, "", None, UNDEFINED, False)] == [False] * 7
    assert [truthy(v) for v in ({}, [], "a", 2, math.inf, True, WEB)] == [True] * 7


def test_logical_operators_return_operands_not_booleans():
    assert ev("process.env.EMPTY || 'default'") == "default"
    assert ev("process.env.PORT || 'default'") == "3000"
    assert ev("0 || null") is None
    assert ev("'a' && 0") == 0
    assert ev("'' && 'never'") == ""
    assert ev("process.env.UNSET && 'x'") is UNDEFINED
    assert ev("process.env.EMPTY ?? 'default'") == ""  # '' is not nullish
    assert ev("null ?? 0") == 0
    assert ev("undefined ?? null") is None
    assert ev("0 ?? 1") == 0


def test_short_circuit_skips_the_failing_branch():
    # ctx.<svc> without inject fails; these must not evaluate it
    assert ev("'x' || ctx.webStartup", injected={}) == "x"
    assert ev("0 && ctx.webStartup", injected={}) == 0
    assert ev("1 ?? ctx.webStartup", injected={}) == 1
    assert ev("true ? 1 : ctx.webStartup", injected={}) == 1
    with pytest.raises(JsEvalError):
        ev("null ?? ctx.webStartup", injected={})


EQUALITY = [
    ("1 === 1.0", True), ("1 === 1", True), ("0 === -0", True), ("true === 1", False),
    ("'1' === 1", False), ("null === undefined", False), ("null === null", True),
    ("undefined === undefined", True), ("'a' === 'a'", True), ("'a' === \"a\"", True),
    ("'a' === 'A'", False), ("true === true", True), ("false === 0", False),
    ("process.env.UNSET === undefined", True), ("process.env.EMPTY === ''", True),
    ("process.env.PORT === 3000", False), ("process.env.PORT === '3000'", True),
    ("ctx.get('cfg') === ctx.get('cfg')", True), ("0x10 === 16", True), ("1e2 === 100", True),
]


@pytest.mark.parametrize("expr, expected", EQUALITY)
def test_strict_equality_table(expr, expected):
    assert ev(expr) is expected
    assert ev(expr.replace("===", "!==")) is (not expected)


def test_strict_equality_of_python_values():
    assert strict_equals(math.nan, math.nan) is False
    assert strict_equals({"a": 1}, {"a": 1}) is False  # objects compare by identity
    assert strict_equals(True, 1) is False and strict_equals(1, 1.0) is True


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr, reason, column", [
    ("process.env.A + 'x'", "operator '+' is not supported", 15),
    ("1 == 1", "loose equality '==' is not supported; use '==='", 3),
    ("1 != 1", "loose equality '!=' is not supported; use '!=='", 3),
    ("foo", "unsupported identifier 'foo'", 1),
    ("Number(process.env.A)", "unsupported identifier 'Number'", 1),
    ("process.getBuiltinModule('x')", "process.getBuiltinModule is not supported", 1),
    ("process.env", "expected '.NAME' or \"['NAME']\" after process.env", 12),
    ("process.env[1]", "expected a string literal in process.env[…]", 13),
    ("process.cwd", "expected '()' after process.cwd", 12),
    ("process.env.A.length", "property access is only supported after ctx.get", 14),
    ("process.env.A?.trim()", "property access is only supported after ctx.get", 14),
    ("'a'.length", "property access is only supported after ctx.get", 4),
    ("dshHomePath(process.env.A)", "dshHomePath takes string literals only", 13),
    ("dshHomePath('a' 'b')", "expected ',' or ')'", 17),
    ("ctx.get(name)", "expected a string literal in ctx.get(…)", 9),
    ("ctx.get('a', 'b')", "expected ')' (ctx.get takes one argument)", 12),
    ("ctx.get", "expected '(' after ctx.get", 8),
    ("ctx.svc.list()", "a method call is not supported", 13),
    ("ctx.svc['k']", "bracket property access is not supported", 8),
    ("ctx.svc?.k", "optional chaining is not supported", 8),
    ("-process.env.A", "unary '-' is supported only before a number literal", 1),
    ("'abc", "unterminated string literal", 1),
    ("'a\nb'", "unterminated string literal", 1),
    ("'\\t'", "escape '\\t' is not supported", 2),
    ("1 ? 2", "expected ':' of a conditional", 6),
    ("(1", "expected ')'", 3),
    ("1 2", "unexpected token, found '2'", 3),
    ("", "expected an expression, found end of expression", 1),
    ("08", "invalid number literal", 1),
    ("10n", "BigInt literals are not supported", 1),
    ("[1]", "array literals are not supported", 1),
    ("x => 1", "unsupported identifier 'x'", 1),
    ("(() => 1)()", "expected an expression, found ')'", 3),
    ("`t`", "template literals is not supported", 1),
    ("1 // c", "comments are not supported", 3),
    ("#", "unexpected character '#'", 1),
])
def test_syntax_errors_name_the_reason_and_column(expr, reason, column):
    with pytest.raises(JsSyntaxError) as info:
        parse(expr)
    assert reason in info.value.reason
    assert info.value.column == column
    assert isinstance(info.value, DshctlError)


@pytest.mark.parametrize("expr, injected, reason", [
    ("ctx.get('missing').port", None, "Cannot read properties of undefined (reading 'port')"),
    ("ctx.get('webStartup').host.name", None, "Cannot read properties of null (reading 'name')"),
    ("ctx.webStartup", None, "ctx.webStartup is not available in 'disabled'"),
    ("ctx.webStartup.port", {"other": 1}, "'webStartup' is not in the row's inject"),
])
def test_evaluation_errors(expr, injected, reason):
    with pytest.raises(JsEvalError) as info:
        ev(expr, injected=injected)
    assert reason in info.value.reason


def test_a_failing_provider_becomes_an_evaluation_error():
    def broken(name):
        raise RuntimeError("provider crashed")
    env = JsEnv({}, "/", "linux", Path("/h"), get_service=broken)
    with pytest.raises(JsEvalError, match="ctx.get\\('x'\\) failed: provider crashed"):
        evaluate(parse("ctx.get('x')"), env)


def test_error_texts_are_the_spec_texts():
    assert unsupported_message("web/startup", "@x/y", "config.port", "a + b") == \
        'unsupported !!js expression in row "web/startup" (@x/y) at config.port: a + b'
    assert eval_failed_message("r", "n", "disabled", "boom") == \
        '!!js evaluation failed in row "r" (n) at disabled: boom'
    assert unsupported_message("r", "n", "config.x", "(() => {\n  return 1\n})()\n") == \
        'unsupported !!js expression in row "r" (n) at config.x: (() => { return 1 })()'


# -- config values ------------------------------------------------------------------------------

CONFIG_YAML = """\
port: !!js ctx.webStartup.port ?? 3080
host: !!js ctx.get('webStartup').host ?? '127.0.0.1'
root: !!js dshHomePath('sessions')
absent: !!js process.env.UNSET
plain: 5
nested:
  list: [!!js process.env.PORT, !!js undefined, 'x']
  deeper: {mode: !!js "process.platform === 'win32' ? 'never' : 'ask'"}
"""


def load_config(text: str = CONFIG_YAML):
    return load_yaml(text, "cordis.yml").value


def test_evaluate_config_replaces_expressions_and_drops_undefined():
    config = load_config()
    out = evaluate_config(config, make_env(injected={"webStartup": WEB}), full_id="w", name="n")
    assert out == {"port": 8080, "host": "127.0.0.1", "root": "/home/u/.dsh/sessions", "plain": 5,
                   "nested": {"list": ["3000", None, "x"], "deeper": {"mode": "ask"}}}
    assert isinstance(out, YMap) and out.loc_of("port") == config.loc_of("port")
    assert isinstance(config["port"], JsExpr)  # the input is never modified


def test_evaluate_config_returns_literal_containers_untouched():
    config = load_config("a: {b: [1, 2]}\n")
    assert evaluate_config(config, make_env(), full_id="r", name="n") is config
    assert evaluate_config(JsExpr("undefined"), make_env(), full_id="r", name="n") is UNDEFINED


def test_evaluate_config_error_names_row_path_and_location():
    config = load_config()
    with pytest.raises(JsEvalError) as info:
        evaluate_config(config, make_env(injected={}), full_id="web/startup", name="@x/web")
    err = info.value
    assert err.message == ('!!js evaluation failed in row "web/startup" (@x/web) at config.port: '
                           "ctx.webStartup is not available: 'webStartup' is not in the row's inject")
    assert err.loc == Loc("cordis.yml", 1, 7) and err.path == "config.port"


def test_evaluate_config_unsupported_expression_error():
    config = load_config("a:\n  - !!js process.env.A + 1\n")
    with pytest.raises(JsSyntaxError) as info:
        evaluate_config(config, make_env(), full_id="r", name="pkg")
    err = info.value
    assert err.message == 'unsupported !!js expression in row "r" (pkg) at config.a.0: process.env.A + 1'
    assert err.loc == Loc("cordis.yml", 2, 5)
    assert "column 15" in err.hint and "operator '+'" in err.hint


def test_disabled_is_evaluated_without_a_fiber():
    node = JsExpr("ctx.webStartup.enabled")
    with pytest.raises(JsEvalError, match="at disabled: ctx.webStartup is not available in 'disabled'"):
        evaluate_config(node, make_env(injected=None), full_id="r", name="n", base_path="disabled")
    assert evaluate_config(JsExpr("!ctx.get('cfg')"), make_env(), full_id="r", name="n",
                           base_path="disabled") is False


def test_check_expressions_lists_every_unsupported_expression():
    config = load_config("a: !!js process.env.A ?? 1\nb:\n  - !!js \"'x' + 1\"\n  - c: !!js foo()\n")
    found = check_expressions(config, full_id="grp/r", name="pkg", base_path="config")
    assert [(path, node.expr) for path, node, _ in found] == [("config.b.0", "'x' + 1"),
                                                             ("config.b.1.c", "foo()")]
    err = found[1][2]
    assert err.message == 'unsupported !!js expression in row "grp/r" (pkg) at config.b.1.c: foo()'
    assert err.loc == Loc("cordis.yml", 4, 8) and err.column == 1


def test_absurd_nesting_is_refused_not_crashed():
    with pytest.raises(JsSyntaxError, match="nested too deeply"):
        parse("(" * 5000 + "1" + ")" * 5000)
    with pytest.raises(JsSyntaxError, match="nested too deeply"):
        parse("!" * 5000 + "1")
    long_chain = parse(" || ".join(["0"] * 5000))  # a loop in the parser, a deep tree to evaluate
    with pytest.raises(JsEvalError, match="nested too deeply"):
        evaluate(long_chain, make_env())
    assert ev(" || ".join(["0"] * 50 + ["'last'"])) == "last"
