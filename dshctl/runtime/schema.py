"""Plugin config validation: a JSON Schema dict checked with jsonschema, defaults filled in."""
from __future__ import annotations

import copy
from typing import Any, Callable

import jsonschema

from .errors import ConfigIssue, ValidationError

ROOT_PATH = "<root>"


def _path(parts) -> str:
    return ".".join(str(p) for p in parts) or ROOT_PATH


def _fill_defaults(schema: dict, value: Any) -> Any:
    """Apply ``default`` of object properties recursively, like Schemastery does on resolve."""
    if value is None and "default" in schema:
        value = copy.deepcopy(schema["default"])
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, dict):
        value = dict(value)
        for key, sub in props.items():
            if isinstance(sub, dict) and (key in value or "default" in sub):
                filled = _fill_defaults(sub, value.get(key))
                if filled is not None or key in value:
                    value[key] = filled
    return value


def validate_config(schema: dict | Callable[[Any], Any] | None, config: Any) -> Any:
    """Return the resolved config, or raise ValidationError listing every issue.

    ``schema`` may be a JSON Schema dict or a callable resolver (its exception becomes one issue).
    """
    if schema is None:
        return config
    if callable(schema) and not isinstance(schema, dict):
        try:
            return schema(config)
        except ValidationError:
            raise
        except Exception as err:  # a resolver's own error: keep its text
            raise ValidationError([ConfigIssue(str(err), ROOT_PATH)]) from err
    resolved = _fill_defaults(schema, config)
    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_cls(schema).iter_errors(resolved), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise ValidationError([ConfigIssue(e.message, _path(e.absolute_path)) for e in errors])
    return resolved
