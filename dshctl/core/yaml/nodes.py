"""The value model every loaded file turns into.

Plain Python values (str, int, float, bool, None) plus three node types:

* ``YMap``  - a ``dict`` (keys are always strings, as in a JavaScript object) that remembers where it,
  each key and each value started;
* ``YList`` - a ``list`` that remembers where it and each item started;
* ``JsExpr`` - a ``!!js <expr>`` scalar: source text only, never evaluated here.

Because YMap and YList subclass dict and list, values compare equal to plain data, and code that
does not care about positions can ignore them.
"""
from __future__ import annotations

from typing import Any

from dshctl.errors import Loc


class JsExpr:
    """An unevaluated ``!!js`` expression. Equal to another JsExpr with the same text."""

    __slots__ = ("expr", "loc")

    def __init__(self, expr: str, loc: Loc | None = None):
        self.expr = expr
        self.loc = loc

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsExpr) and other.expr == self.expr

    def __hash__(self) -> int:
        return hash(("JsExpr", self.expr))

    def __repr__(self) -> str:
        return f"JsExpr({self.expr!r})"

    def to_json(self) -> dict[str, str]:
        return {"__jsExpr": self.expr}


class YMap(dict):
    """A mapping with source positions: ``loc`` for the mapping, per-key ``key_locs``/``value_locs``."""

    __slots__ = ("loc", "key_locs", "value_locs")

    def __init__(self, *args: Any, loc: Loc | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.loc = loc
        self.key_locs: dict[str, Loc] = {}
        self.value_locs: dict[str, Loc] = {}

    def loc_of(self, key: str) -> Loc | None:
        """Where the value of ``key`` starts (falls back to the mapping itself)."""
        return self.value_locs.get(key) or self.loc

    def key_loc(self, key: str) -> Loc | None:
        return self.key_locs.get(key) or self.loc

    def __reduce__(self):  # keep positions through copy/deepcopy/pickle
        return (_rebuild_map, (dict(self), self.loc, self.key_locs, self.value_locs))


class YList(list):
    """A sequence with source positions: ``loc`` for the sequence, ``item_locs[i]`` per item."""

    __slots__ = ("loc", "item_locs")

    def __init__(self, *args: Any, loc: Loc | None = None):
        super().__init__(*args)
        self.loc = loc
        self.item_locs: list[Loc | None] = []

    def loc_of(self, index: int) -> Loc | None:
        if 0 <= index < len(self.item_locs) and self.item_locs[index] is not None:
            return self.item_locs[index]
        return self.loc

    def __reduce__(self):
        return (_rebuild_list, (list(self), self.loc, self.item_locs))


def _rebuild_map(data, loc, key_locs, value_locs):
    m = YMap(data, loc=loc)
    m.key_locs = dict(key_locs)
    m.value_locs = dict(value_locs)
    return m


def _rebuild_list(data, loc, item_locs):
    seq = YList(data, loc=loc)
    seq.item_locs = list(item_locs)
    return seq


def clone(value: Any) -> Any:
    """A structural copy that keeps positions. Much faster than ``copy.deepcopy``.

    Scalars and JsExpr nodes are immutable in practice and are shared.
    """
    if isinstance(value, dict):
        out = YMap(loc=getattr(value, "loc", None))
        for k, v in value.items():
            out[k] = clone(v)
        if isinstance(value, YMap):
            out.key_locs = dict(value.key_locs)
            out.value_locs = dict(value.value_locs)
        return out
    if isinstance(value, list):
        out_list = YList((clone(v) for v in value), loc=getattr(value, "loc", None))
        if isinstance(value, YList):
            out_list.item_locs = list(value.item_locs)
        return out_list
    return value


def to_plain(value: Any, *, js: str = "object") -> Any:
    """Strip positions: YMap -> dict, YList -> list. ``js`` says how to render JsExpr nodes:
    ``"object"`` gives ``{"__jsExpr": expr}`` (dsh's in-memory form), ``"keep"`` keeps JsExpr."""
    if isinstance(value, dict):
        return {k: to_plain(v, js=js) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v, js=js) for v in value]
    if isinstance(value, JsExpr) and js == "object":
        return value.to_json()
    return value


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a loaded value (objects and arrays are truthy, even when empty)."""
    if value is None or value is False:
        return False
    if isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value == value and value != 0  # NaN and 0 are falsy
    if isinstance(value, str):
        return value != ""
    return True
