"""Recursive-descent parser for the ``!!js`` subset, following JavaScript's precedence:

    conditional := shortcircuit ( '?' conditional ':' conditional )?
    shortcircuit := and ( '||' and )*  |  equality ( '??' equality )*     -- no mixing, as in JS
    and         := equality ( '&&' equality )*
    equality    := unary ( ('===' | '!==') unary )*
    unary       := '!' unary | '-' number | primary
    primary     := literal | '(' conditional ')' | process… | dshHomePath(…) | ctx… ( '.' prop )*
"""
from __future__ import annotations

from functools import lru_cache

from dshctl.core.jsexpr.ast import (Conditional, Cwd, CtxGet, CtxService, EnvVar, Equality, Expr,
                                    HomePath, Literal, Logical, Member, Not, Platform)
from dshctl.core.jsexpr.errors import JsSyntaxError
from dshctl.core.jsexpr.tokenizer import Token, iter_tokens
from dshctl.core.jsexpr.values import UNDEFINED

_KEYWORDS = {"true": True, "false": False, "null": None, "undefined": UNDEFINED}
_KNOWN_ROOTS = "process, ctx, dshHomePath, true, false, null and undefined"


@lru_cache(maxsize=4096)
def parse(expr: str) -> Expr:
    """The parse tree of ``expr``; JsSyntaxError (with ``column``) when it is outside the subset."""
    try:
        return _Parser(expr).parse_all()
    except RecursionError:  # e.g. thousands of '(' or '!': refuse instead of crashing
        raise JsSyntaxError("expression is nested too deeply", 1) from None


class _Parser:
    def __init__(self, expr: str):
        self.tokens = iter_tokens(expr)
        self.tok: Token = next(self.tokens)

    # -- token helpers -------------------------------------------------------------------------

    def at(self, text: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == text

    def advance(self) -> Token:
        token = self.tok
        if token.kind != "end":
            self.tok = next(self.tokens)
        return token

    def expect(self, text: str, what: str) -> Token:
        if not self.at(text):
            self.fail(f"expected {what}")
        return self.advance()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.tok.kind != kind:
            self.fail(f"expected {what}")
        return self.advance()

    def fail(self, reason: str):
        token = self.tok
        found = "end of expression" if token.kind == "end" else repr(token.text)
        raise JsSyntaxError(f"{reason}, found {found}", token.column)

    # -- grammar -------------------------------------------------------------------------------

    def parse_all(self) -> Expr:
        tree = self.conditional()
        if self.tok.kind != "end":
            self.fail("unexpected token")
        return tree

    def conditional(self) -> Expr:
        test = self.short_circuit()
        if not self.at("?"):
            return test
        self.advance()
        then = self.conditional()
        self.expect(":", "':' of a conditional")
        return Conditional(test, then, self.conditional())

    def short_circuit(self) -> Expr:
        left, had_and = self.logical_and()
        if self.at("??"):
            if had_and:
                self._mixing_error()
            while self.at("??"):
                self.advance()
                left = Logical("??", left, self.equality())
            if self.at("||") or self.at("&&"):
                self._mixing_error()
            return left
        while self.at("||"):
            self.advance()
            right, _ = self.logical_and()
            left = Logical("||", left, right)
        if self.at("??"):
            self._mixing_error()
        return left

    def _mixing_error(self):
        raise JsSyntaxError("'??' cannot be mixed with '||' or '&&' without parentheses",
                            self.tok.column)

    def logical_and(self) -> tuple[Expr, bool]:
        left = self.equality()
        had_and = False
        while self.at("&&"):
            self.advance()
            left = Logical("&&", left, self.equality())
            had_and = True
        return left, had_and

    def equality(self) -> Expr:
        left = self.unary()
        while self.at("===") or self.at("!=="):
            op = self.advance().text
            left = Equality(op, left, self.unary())
        if self.at("==") or self.at("!="):
            raise JsSyntaxError(f"loose equality '{self.tok.text}' is not supported; "
                                f"use '{self.tok.text}='", self.tok.column)
        return left

    def unary(self) -> Expr:
        if self.at("!"):
            self.advance()
            return Not(self.unary())
        if self.at("-"):
            minus = self.advance()
            if self.tok.kind != "num":
                raise JsSyntaxError("unary '-' is supported only before a number literal",
                                    minus.column)
            return self._no_postfix(Literal(-self.advance().value))
        return self.primary()

    def primary(self) -> Expr:
        token = self.tok
        if token.kind in ("str", "num"):
            self.advance()
            return self._no_postfix(Literal(token.value))
        if self.at("("):
            self.advance()
            inner = self.conditional()
            self.expect(")", "')'")
            return self._no_postfix(inner)
        if self.at("["):
            raise JsSyntaxError("array literals are not supported", token.column)
        if token.kind != "ident":
            self.fail("expected an expression")
        name = token.text
        if name in _KEYWORDS:
            self.advance()
            return self._no_postfix(Literal(_KEYWORDS[name]))
        if name == "process":
            return self._no_postfix(self.process())
        if name == "dshHomePath":
            return self._no_postfix(self.home_path())
        if name == "ctx":
            return self.ctx()
        raise JsSyntaxError(f"unsupported identifier '{name}' (the subset knows {_KNOWN_ROOTS})",
                            token.column)

    def _no_postfix(self, node: Expr) -> Expr:
        """Property access and calls exist only after ctx atoms; say so instead of 'unexpected'."""
        if self.at(".") or self.at("[") or self.at("(") or self.at("?."):
            raise JsSyntaxError(f"'{self.tok.text}' is not supported here: property access is "
                                "only supported after ctx.get(…) or ctx.<service>", self.tok.column)
        return node

    def process(self) -> Expr:
        start = self.advance()
        self.expect(".", "'.' after process")
        member = self.expect_kind("ident", "a property of process")
        if member.text == "env":
            if self.at("["):
                self.advance()
                name = self.expect_kind("str", "a string literal in process.env[…]").value
                self.expect("]", "']'")
                return EnvVar(name)
            self.expect(".", "'.NAME' or \"['NAME']\" after process.env")
            return EnvVar(self.expect_kind("ident", "an environment variable name").text)
        if member.text == "cwd":
            self.expect("(", "'()' after process.cwd")
            self.expect(")", "')' (process.cwd takes no arguments)")
            return Cwd()
        if member.text == "platform":
            return Platform()
        raise JsSyntaxError(f"process.{member.text} is not supported (only process.env, "
                            "process.cwd() and process.platform)", start.column)

    def home_path(self) -> Expr:
        self.advance()
        self.expect("(", "'(' after dshHomePath")
        segments: list[str] = []
        while not self.at(")"):
            if self.tok.kind != "str":
                self.fail("dshHomePath takes string literals only")
            segments.append(self.advance().value)
            if not self.at(")"):
                self.expect(",", "',' or ')'")
        self.advance()
        return HomePath(tuple(segments))

    def ctx(self) -> Expr:
        self.advance()
        self.expect(".", "'.' after ctx")
        member = self.expect_kind("ident", "a service name after ctx.")
        node: Expr
        if member.text == "get":
            self.expect("(", "'(' after ctx.get")
            service = self.expect_kind("str", "a string literal in ctx.get(…)").value
            self.expect(")", "')' (ctx.get takes one argument)")
            node = CtxGet(service)
        else:
            node = CtxService(member.text)
        while self.at("."):
            self.advance()
            node = Member(node, self.expect_kind("ident", "a property name after '.'").text)
        if self.at("(") or self.at("[") or self.at("?."):
            what = {"(": "a method call", "[": "bracket property access",
                    "?.": "optional chaining"}[self.tok.text]
            raise JsSyntaxError(f"{what} is not supported; read a property with .name",
                                self.tok.column)
        return node
