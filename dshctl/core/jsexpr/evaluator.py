"""Evaluate a parse tree with JavaScript semantics against an explicit environment (never as code)."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshctl.core.jsexpr.ast import (Conditional, Cwd, CtxGet, CtxService, EnvVar, Equality, Expr,
                                    HomePath, Literal, Logical, Member, Not, Platform)
from dshctl.core.jsexpr.errors import JsEvalError
from dshctl.core.jsexpr.values import UNDEFINED, is_nullish, strict_equals, truthy


def node_platform(py_platform: str = sys.platform) -> str:
    """Node's ``process.platform`` for a Python ``sys.platform``."""
    if py_platform.startswith(("win32", "cygwin", "msys")):
        return "win32"
    for prefix in ("linux", "darwin", "freebsd", "openbsd", "netbsd", "aix", "android"):
        if py_platform.startswith(prefix):
            return prefix
    if py_platform.startswith("sunos"):
        return "sunos"
    return py_platform


@dataclass
class JsEnv:
    """What an expression may see. ``injected`` is None while evaluating ``disabled`` (no fiber)."""

    environ: Mapping[str, str]
    cwd: str
    platform: str
    home: Path
    get_service: Callable[[str], Any] | None = None
    injected: Mapping[str, Any] | None = None

    @classmethod
    def current(cls, home: Path, *, get_service: Callable[[str], Any] | None = None,
                injected: Mapping[str, Any] | None = None) -> "JsEnv":
        """The environment of this process, taken now (process.cwd() is read at evaluation time)."""
        return cls(dict(os.environ), os.getcwd(), node_platform(), Path(home), get_service, injected)


def evaluate(tree: Expr, env: JsEnv) -> Any:
    """The value of ``tree``; JsEvalError (with a JavaScript-like reason) when evaluation fails."""
    try:
        return _evaluate(tree, env)
    except RecursionError:  # a very long `a || b || …` chain is a deep left-leaning tree
        raise JsEvalError("expression is nested too deeply") from None


def _evaluate(tree: Expr, env: JsEnv) -> Any:
    kind = type(tree)
    if kind is Literal:
        return tree.value
    if kind is Logical:
        left = _evaluate(tree.left, env)
        if tree.op == "??":
            return _evaluate(tree.right, env) if is_nullish(left) else left
        if tree.op == "||":
            return left if truthy(left) else _evaluate(tree.right, env)
        return _evaluate(tree.right, env) if truthy(left) else left
    if kind is Equality:
        same = strict_equals(_evaluate(tree.left, env), _evaluate(tree.right, env))
        return same if tree.op == "===" else not same
    if kind is Not:
        return not truthy(_evaluate(tree.operand, env))
    if kind is Conditional:
        branch = tree.then if truthy(_evaluate(tree.test, env)) else tree.otherwise
        return _evaluate(branch, env)
    if kind is EnvVar:
        value = env.environ.get(tree.name)
        return UNDEFINED if value is None else value
    if kind is Cwd:
        return env.cwd
    if kind is Platform:
        return env.platform
    if kind is HomePath:
        return _home_path(env.home, tree.segments)
    return _ctx_value(tree, env)


def _home_path(home: Path, segments: tuple[str, ...]) -> str:
    # Node's path.join: segments are appended (an absolute segment does not reset), then normalized.
    return os.path.normpath(os.sep.join([str(home), *segments]))


def _ctx_value(tree: Expr, env: JsEnv) -> Any:
    if isinstance(tree, Member):
        return read_property(_ctx_value(tree.target, env), tree.prop)
    if isinstance(tree, CtxGet):
        if env.get_service is None:
            return UNDEFINED
        try:
            value = env.get_service(tree.service)
        except Exception as exc:  # a provider's failure becomes the row's failure, not a crash
            raise JsEvalError(f"ctx.get('{tree.service}') failed: {exc}") from exc
        return UNDEFINED if value is None else value
    if isinstance(tree, CtxService):
        if env.injected is None:
            raise JsEvalError(f"ctx.{tree.service} is not available in 'disabled' (it is evaluated "
                              f"without a fiber); use ctx.get('{tree.service}')")
        if tree.service not in env.injected:
            raise JsEvalError(f"ctx.{tree.service} is not available: '{tree.service}' is not in "
                              "the row's inject")
        return env.injected[tree.service]
    raise TypeError(f"not a !!js parse tree: {tree!r}")  # a programming error, not bad input


def read_property(target: Any, prop: str) -> Any:
    """``target.prop``: a mapping key, else a public attribute, else undefined."""
    if is_nullish(target):
        kind = "undefined" if target is UNDEFINED else "null"
        raise JsEvalError(f"Cannot read properties of {kind} (reading '{prop}')")
    if isinstance(target, Mapping):
        return target.get(prop, UNDEFINED)
    if prop.startswith("_"):
        return UNDEFINED  # Python internals are not part of a service's surface
    try:
        return getattr(target, prop, UNDEFINED)
    except Exception as exc:
        raise JsEvalError(f"reading '{prop}' failed: {exc}") from exc
