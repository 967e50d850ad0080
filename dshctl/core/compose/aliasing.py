"""JavaScript object-graph semantics for loaded values.

YAML aliases make one node reachable from two places, exactly as one object referenced twice in
JavaScript. dsh relies on ``structuredClone`` (which keeps such sharing) and would overflow its stack on
a cycle; these helpers give dshctl the same sharing and a clean refusal of cycles.
"""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml import jsvalue
from dshctl.core.yaml.nodes import JsExpr, YList, YMap

_OBJECTS = (dict, list, JsExpr)
_NO_LOCS: dict = {}


class StructuredClone:
    """``structuredClone`` for loaded values: shared references stay shared (YAML aliases)."""

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.shared = False
        self.js_shared = False  # one !!js object reached twice (the clone keeps that identity too)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, (dict, list)):
            hit = self.memo.get(id(value))
            if hit is not None:  # a second reference to one node: the clone shares it too
                self.shared = True
                return hit
            return self._sequence(value) if isinstance(value, list) else self._mapping(value)
        if type(value) is JsExpr:  # an object in JavaScript: the clone is a new one (=== is identity)
            hit = self.memo.get(id(value))
            if hit is None:
                hit = self.memo[id(value)] = JsExpr(value.expr, value.loc)
            else:
                self.js_shared = True
            return hit
        return value

    def _mapping(self, value: dict) -> YMap:
        out = YMap.__new__(YMap)
        self.memo[id(value)] = out
        items = value.items()
        if jsvalue.has_index_key(value):  # a JavaScript object lists "2" before "a": so does the clone
            items = [(k, value[k]) for k in jsvalue.js_key_order(list(value))]
        for k, v in items:
            out[k] = self(v) if isinstance(v, _OBJECTS) else v
        # Position tables are shared, not copied: nothing writes to them except `override`, which
        # gives its target a copy of its own first.
        out.loc = getattr(value, "loc", None)
        out.key_locs = getattr(value, "key_locs", _NO_LOCS)
        out.value_locs = getattr(value, "value_locs", _NO_LOCS)
        return out

    def _sequence(self, value: list) -> YList:
        seq = YList.__new__(YList)
        self.memo[id(value)] = seq
        seq.extend([self(v) if isinstance(v, _OBJECTS) else v for v in value])
        seq.loc = getattr(value, "loc", None)
        seq.item_locs = getattr(value, "item_locs", [])  # shared: never written after parsing
        return seq


def find_cycle(value: Any) -> Any:
    """A node that (transitively) contains itself, or None. Gray/black DFS: linear in distinct nodes."""
    done: set[int] = set()
    open_: set[int] = set()

    def visit(node: Any) -> Any:
        key = id(node)
        if key in done:
            return None
        if key in open_:
            return node
        open_.add(key)
        for child in (node.values() if isinstance(node, dict) else node):
            if isinstance(child, (dict, list)):
                found = visit(child)
                if found is not None:
                    return found
        open_.discard(key)
        done.add(key)
        return None

    return visit(value) if isinstance(value, (dict, list)) else None
