"""A quick yes for tool arguments that plainly match their schema, before the full JSON Schema validator.

jsonschema's walk was a tenth of a turn's loop CPU for three tool calls. Tool schemas use a small part of
JSON Schema; for a schema made only of the keywords below, ``plainly_valid`` decides validity exactly as
Draft 2020-12 does. Any other keyword (``$ref``, ``oneOf``, ``pattern``, formats…) makes the schema
"not understood" and ``plainly_valid`` says None, so the full validator decides; it also decides whenever
the quick check finds a problem, since only it words the message.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated",
                          "readOnly", "writeOnly", "$schema"})
_CHECKED = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum",
                      "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"})


def _number(v: Any) -> bool:
    return type(v) in (int, float)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "number": _number,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


def understood(schema: Any) -> bool:
    """Whether every keyword of ``schema`` (and of its sub-schemas) is one ``check`` decides exactly."""
    if schema is True or schema is False:
        return True
    if type(schema) is not dict or not set(schema) <= _ANNOTATIONS | _CHECKED:
        return False
    kind = schema.get("type")
    kinds = kind if type(kind) is list else [kind] if kind is not None else []
    if not all(k in _TYPES for k in kinds):
        return False
    enum = schema.get("enum")
    if enum is not None and not (type(enum) is list and all(type(e) is str for e in enum)):
        return False                       # string enums only: no bool-versus-int equality to mimic
    props = schema.get("properties", {})
    if type(props) is not dict or not all(understood(s) for s in props.values()):
        return False
    extra = schema.get("additionalProperties", True)
    required = schema.get("required", [])
    bounds = all(_number(schema[k]) for k in ("minLength", "maxLength", "minimum", "maximum", "minItems",
                                                 "maxItems") if k in schema)
    return bounds and type(required) is list and all(type(r) is str for r in required) \
        and understood(extra) and understood(schema.get("items", True))


def check(schema: Any, value: Any) -> bool:
    """``value`` against an ``understood`` schema: True when valid."""
    if schema is True:
        return True
    if schema is False:
        return False
    kind = schema.get("type")
    if kind is not None and not any(_TYPES[k](value) for k in (kind if type(kind) is list else [kind])):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or ("maxLength" in schema and len(value) > schema["maxLength"]):
            return False
    elif _number(value):
        if ("minimum" in schema and value < schema["minimum"]) or ("maximum" in schema and value > schema["maximum"]):
            return False
    elif type(value) is list:
        if len(value) < schema.get("minItems", 0) or ("maxItems" in schema and len(value) > schema["maxItems"]):
            return False
        items = schema.get("items", True)
        return items is True or all(check(items, v) for v in value)
    elif type(value) is dict:
        return _object(schema, value)
    return True


def _object(schema: dict, value: dict) -> bool:
    props = schema.get("properties", {})
    if any(key not in value for key in schema.get("required", ())):
        return False
    extra = schema.get("additionalProperties", True)
    for key, v in value.items():
        sub = props.get(key, extra)
        if sub is not True and not check(sub, v):
            return False
    return True


_UNDERSTOOD: dict[int, tuple[dict, bool]] = {}   # id(schema) -> (schema, understood?)


def plainly_valid(schema: dict, value: Any) -> Optional[bool]:
    """True when ``value`` matches ``schema`` for sure; None when the full validator must decide."""
    cached = _UNDERSTOOD.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _UNDERSTOOD[id(schema)] = (schema, understood(schema))  # holding it keeps its id
    if cached[1] and check(schema, value):
        return True
    return None
