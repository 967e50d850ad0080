"""Tool arguments against the tool's input JSON Schema (validators compiled once per schema)."""
from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from dshctl.core.schemacheck import Unsupported, compile_schemas

_VALIDATORS: dict[int, tuple[dict, Draft202012Validator]] = {}   # id(schema) -> (schema, validator)
_QUICK: dict[int, tuple[dict, Any]] = {}   # id(schema) -> (schema, its compiled yes/no check or None)


def quick_check(schema: dict):
    """The schema compiled to a yes/no predicate with Draft 2020-12's verdicts (``core.schemacheck``,
    as lint's schemas are), or None where it uses a keyword the compiler does not know."""
    cached = _QUICK.get(id(schema))
    if cached is None or cached[0] is not schema:
        try:
            check = compile_schemas({"tool": schema})["tool"]
        except Unsupported:
            check = None
        cached = _QUICK[id(schema)] = (schema, check)    # holding the schema keeps its id from being reused
    return cached[1]


def _validator(schema: dict) -> Draft202012Validator:
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    validator = Draft202012Validator(schema)
    _VALIDATORS[id(schema)] = (schema, validator)   # holding the schema keeps its id from being reused
    return validator


def argument_problem(schema: Any, args: Any) -> str | None:
    """None when ``args`` matches ``schema``; else one line: where (``$.path``) and what is wrong."""
    if not isinstance(schema, dict) or not schema:
        return None
    quick = quick_check(schema)
    if quick is not None and quick(args):   # the common case, without jsonschema's walk
        return None
    error = next(iter(sorted(_validator(schema).iter_errors(args), key=lambda e: list(e.path))), None)
    if error is None:
        return None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"{where}: {error.message}"


def dsh_violations(schema: dict, value: Any, path: str = "") -> list[str]:
    """dsh's own argument check (its JSON-schema subset: type, properties, required, additionalProperties,
    items, enum, const) and its violation texts, in its order: an object's missing properties, then its
    properties' problems, then undeclared keys. The model reads them as ``invalid arguments: A; B``."""
    where = path or "arguments"
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f'"{where}" must be an object']
        properties = schema.get("properties") or {}
        out = [f'missing required property "{_join(path, key)}"' for key in schema.get("required") or []
               if key not in value]
        for key, child in properties.items():
            if key in value:
                out += dsh_violations(child, value[key], _join(path, key))
        if schema.get("additionalProperties") is False:
            out += [f'"{_join(path, key)}" is not a declared property (additionalProperties: false)'
                    for key in value if key not in properties]
        return out
    if kind == "array":
        if not isinstance(value, list):
            return [f'"{where}" must be an array']
        items = schema.get("items")
        return [v for i, entry in enumerate(value) for v in (dsh_violations(items, entry, f"{path}[{i}]")
                                                             if isinstance(items, dict) else [])]
    checks = {"string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) or
              isinstance(v, float) and v.is_integer()}
    if kind in checks and not checks[kind](value):
        return [f'"{where}" must be {"an" if kind == "integer" else "a"} {kind}']
    if "enum" in schema and value not in schema["enum"]:
        return [f'"{where}" must be one of {_json(schema["enum"])}']
    if "const" in schema and value != schema["const"]:
        return [f'"{where}" must be {_json(schema["const"])}']
    return []


def _join(path: str, key: str) -> str:
    return key if path == "" else f"{path}.{key}"


def _json(value: Any) -> str:
    import json
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
