"""Tool arguments against the tool's input JSON Schema (validators compiled once per schema)."""
from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

_VALIDATORS: dict[int, tuple[dict, Draft202012Validator]] = {}   # id(schema) -> (schema, validator)


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
    error = next(iter(sorted(_validator(schema).iter_errors(args), key=lambda e: list(e.path))), None)
    if error is None:
        return None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"{where}: {error.message}"
