"""Everything observable about composed rows, for comparing two compositions: values, types, key
order, positions, and which nodes are one object (YAML aliases, structuredClone's sharing)."""
from __future__ import annotations

from dshctl.core.yaml.nodes import JsExpr


def shape(value, seen=None):
    seen = {} if seen is None else seen
    if isinstance(value, (dict, list, JsExpr)):
        if id(value) in seen:
            return ("same-as", seen[id(value)])
        seen[id(value)] = len(seen)
    if isinstance(value, JsExpr):
        return ("js", value.expr, repr(value.loc))
    if isinstance(value, dict):
        return (type(value).__name__, repr(getattr(value, "loc", None)),
                repr(sorted(getattr(value, "key_locs", {}).items())),
                repr(sorted(getattr(value, "value_locs", {}).items())),
                [(k, shape(v, seen)) for k, v in value.items()])
    if isinstance(value, list):
        return (type(value).__name__, repr(getattr(value, "loc", None)),
                repr(getattr(value, "item_locs", None)), [shape(v, seen) for v in value])
    return (type(value).__name__, repr(value))


def warnings_of(warnings) -> list:
    return [(w.layer, w.message, w.code, repr(w.loc), repr(w.target)) for w in warnings]
