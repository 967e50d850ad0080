"""Parse trees of the ``!!js`` subset (cordis-runtime.md §12.5).

Nodes are frozen dataclasses, so trees are immutable, hashable and compare structurally. Grouping
parentheses leave no node: they only steer the parser.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any, Union


@dataclass(frozen=True)
class Literal:
    """A string, number, ``true``/``false``, ``null`` (None) or ``undefined`` (UNDEFINED)."""

    value: Any


@dataclass(frozen=True)
class EnvVar:
    """``process.env.NAME`` or ``process.env['NAME']`` (the two spellings give the same node)."""

    name: str


@dataclass(frozen=True)
class Cwd:
    """``process.cwd()``."""


@dataclass(frozen=True)
class Platform:
    """``process.platform``."""


@dataclass(frozen=True)
class HomePath:
    """``dshHomePath('seg', …)``."""

    segments: tuple[str, ...]


@dataclass(frozen=True)
class CtxGet:
    """``ctx.get('svc')``: the service's current value, or undefined."""

    service: str


@dataclass(frozen=True)
class CtxService:
    """``ctx.<svc>``: an injected service; only legal when ``svc`` is in the row's inject."""

    service: str


@dataclass(frozen=True)
class Member:
    """``<ctx atom>.prop``: a mapping key or an attribute."""

    target: "Expr"
    prop: str


@dataclass(frozen=True)
class Not:
    operand: "Expr"


@dataclass(frozen=True)
class Logical:
    """``||``, ``&&`` or ``??``; all short-circuit and return an operand."""

    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Equality:
    """``===`` or ``!==``."""

    op: str
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class Conditional:
    test: "Expr"
    then: "Expr"
    otherwise: "Expr"


Expr = Union[Literal, EnvVar, Cwd, Platform, HomePath, CtxGet, CtxService, Member, Not, Logical,
             Equality, Conditional]


def ctx_services(tree: Expr) -> set[str]:
    """The services ``tree`` reads as ``ctx.<svc>`` (each must be in the row's inject)."""
    if isinstance(tree, CtxService):
        return {tree.service}
    found: set[str] = set()
    for f in fields(tree):
        child = getattr(tree, f.name)
        if is_dataclass(child):
            found |= ctx_services(child)
    return found
