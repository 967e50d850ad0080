"""Fast yes/no checks compiled from the shipped JSON Schemas (a lint of a valid file skips jsonschema).

``compile_schemas(resources)`` turns each schema (the same dicts ``core.schemas`` hands jsonschema, so
never a looser one) into a plain Python predicate that answers only "valid or not", with jsonschema's
Draft 2020-12 semantics for the keywords the shipped schemas use. A value it calls invalid is then
validated by jsonschema itself, so every message stays exactly jsonschema's; a valid one (nearly
every file) never imports jsonschema (~90 ms) nor pays its per-node cost. A keyword this compiler does
not know raises ``Unsupported``: such a schema keeps plain jsonschema (``core.schemas`` falls back).
``tests/test_schemacheck.py`` proves the verdicts equal jsonschema's on generated instances and on
every corpus file. Instances are dshctl's node model: ``JsExpr`` counts as ``{"__jsExpr": text}``
(what ``to_plain`` gives jsonschema). May import ``dshctl.core.yaml.nodes`` only.
"""
from __future__ import annotations

import numbers
import re
from typing import Any, Callable, Mapping

from dshctl.core.yaml.nodes import JsExpr

Check = Callable[[Any], bool]

# Keywords that never decide validity (jsonschema ignores unknown keywords too; these are the ones
# the shipped schemas carry). Any other keyword this module does not implement is Unsupported.
_ANNOTATIONS = frozenset({"$schema", "$defs", "$comment", "title", "description", "examples", "default",
                          "deprecated", "readOnly", "writeOnly", "x-dshctl-severity"})
_PY_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": lambda x: _is_number(x),
    # Draft 6 and later: 1.0 is an integer
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool))
    or (isinstance(x, float) and x.is_integer()),
}


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


class Unsupported(Exception):
    """The schema uses something this compiler does not implement: validate it with jsonschema."""


def plain(x: Any) -> Any:
    """The JSON form jsonschema sees for one node (only ``JsExpr`` differs from the node itself)."""
    return {"__jsExpr": x.expr} if x.__class__ is JsExpr else x


def equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema decides it: ``true`` is not ``1``, lists and mappings compare deeply."""
    a, b = plain(a), plain(b)
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return a == b


def compile_schemas(resources: Mapping[str, Any]) -> dict[str, Check]:
    """One predicate per resource (by its name, as ``$ref`` spells it: ``entry-list.schema.json``)."""
    compiler = _Compiler(resources)
    return {name: compiler.at(name, "") for name in resources}


def compile_refs(resources: Mapping[str, Any], refs: list[str]) -> dict[str, Check]:
    """One predicate per absolute ``$ref`` (``entry-list.schema.json#/$defs/row``): a part of a schema."""
    compiler = _Compiler(resources)
    return {ref: compiler.ref(ref, "") for ref in refs}


class _Compiler:
    def __init__(self, resources: Mapping[str, Any]) -> None:
        self.resources = resources
        self.done: dict[tuple[str, str], Check] = {}

    def at(self, resource: str, pointer: str) -> Check:
        key = (resource, pointer)
        if key not in self.done:
            cell: list[Check] = []
            self.done[key] = lambda x: cell[0](x)  # a placeholder for recursive references
            compiled = self.node(_resolve(self.resources, resource, pointer), resource)
            cell.append(compiled)
            self.done[key] = compiled
        return self.done[key]

    def ref(self, target: str, resource: str) -> Check:
        name, _, fragment = target.partition("#")
        if fragment and not fragment.startswith("/"):
            raise Unsupported(f"$ref {target!r}: only JSON pointers are compiled")
        name = name or resource
        if name not in self.resources:
            raise Unsupported(f"$ref {target!r}: not a shipped schema")
        key = (name, fragment)
        if key in self.done:
            return self.done[key]
        return self.at(name, fragment)

    def node(self, schema: Any, resource: str) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"schema node {schema!r}")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue
            build = getattr(self, "k_" + keyword.replace("$", "dollar_"), None)
            if build is None:
                raise Unsupported(f"keyword {keyword!r}")
            checks.append(build(value, schema, resource))
        return _all_of(checks)

    # -- keywords: each returns a check of one value whose JsExpr is already in its object form
    # (``_all_of`` converts once per schema node); a check passes values it does not apply to.

    def k_dollar_ref(self, target, schema, resource) -> Check:
        return self.ref(target, resource)  # a recursive reference is a placeholder filled in later

    def k_type(self, value, schema, resource) -> Check:
        names = value if isinstance(value, list) else [value]
        if not all(n in _PY_TYPES for n in names):
            raise Unsupported(f"type {value!r}")
        tests = [_PY_TYPES[n] for n in names]
        if len(tests) == 1:
            return tests[0]
        return lambda x: any(t(x) for t in tests)

    def k_const(self, value, schema, resource) -> Check:
        return lambda x: equal(x, value)

    def k_enum(self, value, schema, resource) -> Check:
        return lambda x: any(equal(x, v) for v in value)

    def k_minLength(self, value, schema, resource) -> Check:
        return lambda x: not isinstance(x, str) or len(x) >= value

    def k_maxLength(self, value, schema, resource) -> Check:
        return lambda x: not isinstance(x, str) or len(x) <= value

    def k_minimum(self, value, schema, resource) -> Check:
        return lambda x: not _is_number(x) or x >= value

    def k_maximum(self, value, schema, resource) -> Check:
        return lambda x: not _is_number(x) or x <= value

    def k_minItems(self, value, schema, resource) -> Check:
        return lambda x: not isinstance(x, list) or len(x) >= value

    def k_maxItems(self, value, schema, resource) -> Check:
        return lambda x: not isinstance(x, list) or len(x) <= value

    def k_pattern(self, value, schema, resource) -> Check:
        search = re.compile(value).search
        return lambda x: not isinstance(x, str) or search(x) is not None

    def k_required(self, value, schema, resource) -> Check:
        names = list(value)
        return lambda x: not isinstance(x, dict) or all(n in x for n in names)

    def k_properties(self, value, schema, resource) -> Check:
        subs = [(name, self.node(sub, resource)) for name, sub in value.items() if sub is not True]
        subs = [(name, check) for name, check in subs if check is not _always]

        def check(x):
            if not isinstance(x, dict):
                return True
            for name, sub in subs:
                if name in x and not sub(x[name]):
                    return False
            return True
        return check

    def k_additionalProperties(self, value, schema, resource) -> Check:
        if "patternProperties" in schema:
            raise Unsupported("patternProperties")
        known = frozenset(schema.get("properties", {}))
        if value is False:
            return lambda x: not isinstance(x, dict) or all(k in known for k in x)
        sub = self.node(value, resource)

        def check(x):
            if not isinstance(x, dict):
                return True
            return all(sub(v) for k, v in x.items() if k not in known)
        return check

    def k_items(self, value, schema, resource) -> Check:
        if "prefixItems" in schema or not isinstance(value, (dict, bool)):
            raise Unsupported("items with prefixItems")
        sub = self.node(value, resource)
        return lambda x: not isinstance(x, list) or all(sub(v) for v in x)

    def k_anyOf(self, value, schema, resource) -> Check:
        subs = [self.node(s, resource) for s in value]
        return lambda x: any(s(x) for s in subs)

    def k_not(self, value, schema, resource) -> Check:
        sub = self.node(value, resource)
        return lambda x: not sub(x)

    def k_if(self, value, schema, resource) -> Check:
        test = self.node(value, resource)
        then = self.node(schema.get("then", True), resource)
        otherwise = self.node(schema.get("else", True), resource)
        return lambda x: then(x) if test(x) else otherwise(x)


def _always(x: Any) -> bool:
    return True


def _never(x: Any) -> bool:
    return False


def _all_of(checks: list[Check]) -> Check:
    checks = [c for c in checks if c is not _always]
    if not checks:
        return _always
    if len(checks) == 1:
        only = checks[0]
        return lambda x: only(plain(x))
    return lambda x: all(c(plain(x)) for c in checks)


def _resolve(resources: Mapping[str, Any], resource: str, pointer: str) -> Any:
    node = resources[resource]
    if not pointer:
        return node
    for raw in pointer[1:].split("/"):
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(step)]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            raise Unsupported(f"pointer {pointer!r} in {resource}")
    return node
