"""Reading a plugin's config schema the way a person asks about it: the properties a mapping may have,
the values a key may take, and one property in words (description, type, default, allowed values).

A property may be declared in the schema itself or in a branch of ``allOf`` / ``anyOf`` / ``oneOf``;
local ``$ref``s (``#/$defs/...``) are followed. The first declaration of a property wins for its docs.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

_BRANCHES = ("allOf", "anyOf", "oneOf")


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _deref(schema: Any, root: dict, depth: int = 0) -> Any:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return {}
        target: Any = root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        schema, depth = target, depth + 1
    return schema if isinstance(schema, dict) else {}


def _variants(schema: Any, root: dict, depth: int = 0) -> Iterator[dict]:
    """The schema and every branch below it (``$ref`` followed)."""
    schema = _deref(schema, root)
    yield schema
    if depth < 8:
        for key in _BRANCHES:
            for branch in _list(schema.get(key)):
                yield from _variants(branch, root, depth + 1)


def properties(schema: Any, root: dict) -> dict[str, dict]:
    """Property name -> its schema, for a mapping that ``schema`` describes."""
    out: dict[str, dict] = {}
    for variant in _variants(schema, root):
        for name, prop in _dict(variant.get("properties")).items():
            out.setdefault(name, _deref(prop, root))
    return out


def at_path(schema: dict, path: list[str]) -> dict | None:
    """The schema of the value at ``path`` (a chain of mapping keys) inside a config ``schema``."""
    current: Any = schema
    for key in path:
        props = properties(current, schema)
        if key in props:
            current = props[key]
            continue
        extra = next((v["additionalProperties"] for v in _variants(current, schema)
                      if isinstance(v.get("additionalProperties"), dict)), None)
        if extra is None:
            return None
        current = _deref(extra, schema)
    return _deref(current, schema)


def allowed_values(prop: dict, root: dict) -> list[Any]:
    """The values a key may take when the schema lists them: ``enum``, ``const``, booleans."""
    out: list[Any] = []

    def add(value: Any) -> None:
        if not any(value == v and type(value) is type(v) for v in out):
            out.append(value)
    for variant in _variants(prop, root):
        for value in _list(variant.get("enum")):
            add(value)
        if "const" in variant:
            add(variant["const"])
        types = variant.get("type")
        if types == "boolean" or (isinstance(types, list) and "boolean" in types):
            add(True)
            add(False)
    return out


def type_words(prop: dict, root: dict) -> str:
    words: list[str] = []
    for variant in _variants(prop, root):
        types = variant.get("type")
        for word in ([types] if isinstance(types, str) else types if isinstance(types, list) else []):
            if isinstance(word, str) and word not in words:
                words.append(word)
    return " | ".join(words)


_LIMITS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"),
           ("minLength", "length ≥"), ("maxLength", "length ≤"), ("minItems", "items ≥"),
           ("maxItems", "items ≤"))


def describe(name: str, prop: dict, root: dict) -> str:
    """Markdown for one property: its description, type, default, allowed values and bounds."""
    lines = [f"`{name}`" + (f": {type_words(prop, root)}" if type_words(prop, root) else "")]
    description = next((v["description"] for v in _variants(prop, root) if isinstance(v.get("description"), str)),
                       None)
    if description:
        lines.append(description)
    facts = []
    if "default" in prop:
        facts.append(f"default: `{as_json(prop['default'])}`")
    values = allowed_values(prop, root)
    if values and type_words(prop, root) != "boolean":
        facts.append("one of: " + ", ".join(f"`{as_json(v)}`" for v in values))
    bounds = [f"{word} {prop[key]}" for key, word in _LIMITS if key in prop]
    if bounds:
        facts.append(", ".join(bounds))
    if "required" in prop and isinstance(prop["required"], list) and prop["required"]:
        facts.append("requires: " + ", ".join(f"`{r}`" for r in prop["required"]))
    return "\n\n".join(lines + facts)


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)  # a bundle's schema may hold a non-JSON literal
