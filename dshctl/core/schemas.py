"""The JSON Schemas dshctl ships, and validation that points at the offending node.

Every jsonschema error becomes one ``Diagnostic`` located at the node it is about (via the positions
``YMap``/``YList`` keep), with a hint taken from the schema's own description. For ``anyOf``/``oneOf``
failures we report the branch the instance was evidently aiming at (its discriminating keys are
present), not every branch's complaints.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from dshctl.core.data import schemas_dir
from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml.nodes import JsExpr, YList, YMap, to_plain
from dshctl.errors import Loc, UsageError

# name -> file in schemas/
SCHEMAS: dict[str, str] = {
    "entry-list": "entry-list.schema.json",
    "cordis.patch": "cordis.patch.schema.json",
    "preset": "preset.schema.json",
    "profile-manifest": "profile-manifest.schema.json",
    "bundle-manifest": "bundle-manifest.schema.json",
    "settings": "settings.schema.json",
}
ALIASES: dict[str, str] = {
    "cordis": "entry-list", "cordis.yml": "entry-list", "agent.cordis": "entry-list",
    "agent.cordis.yml": "entry-list", "entries": "entry-list",
    "patch": "cordis.patch", "cordis.patch.yml": "cordis.patch", "overlay": "cordis.patch",
    "preset.yml": "preset",
    "profile": "profile-manifest", "bundle": "bundle-manifest", "client": "bundle-manifest",
    "settings.yaml": "settings",
}

RULE = "schema"
# Validators whose failure at a branch's root means "the instance is not this form at all".
_DISCRIMINATORS = frozenset({"required", "not", "type", "const", "enum"})
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def canonical_name(name: str) -> str:
    """The schema name for ``name`` or one of its aliases; UsageError if unknown."""
    if name in SCHEMAS:
        return name
    if name in ALIASES:
        return ALIASES[name]
    raise UsageError(f"unknown schema {name!r}",
                     hint="known schemas: " + ", ".join(SCHEMAS) + " (run 'dshctl schema list')")


def schema_path(name: str) -> Path:
    return schemas_dir() / SCHEMAS[canonical_name(name)]


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(schema_path(name).read_text(encoding="utf-8"))


def lint_resources() -> dict[str, Any]:
    """Every shipped schema, by the file name ``$ref``s use. The shipped files are the strict schemas
    validators get (`schema show|path|export`); yaml-language-server's variant, which takes a string
    where dsh takes ``!!js``, is made by ``schema_export.for_yaml_language_server``, never shipped."""
    return {SCHEMAS[n]: load_schema(n) for n in SCHEMAS}


@lru_cache(maxsize=None)
def _fast_checks() -> dict[str, Any]:
    """Schema name -> its compiled yes/no check (``core.schemacheck``), or None where a schema uses
    something the compiler does not know (that one is always validated by jsonschema)."""
    from dshctl.core.schemacheck import Unsupported, compile_schemas

    resources = lint_resources()
    try:
        by_file = compile_schemas(resources)
    except Unsupported:
        return {name: None for name in SCHEMAS}
    return {name: by_file[SCHEMAS[name]] for name in SCHEMAS}


def prepare() -> None:
    """Compile every check a lint may need (before forking workers, so that each inherits them)."""
    _fast_checks()
    _item_checks()


@lru_cache(maxsize=None)
def _validator(name: str):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    # The schemas carry no $id (an editor would resolve relative $refs against it, and no URL is
    # reachable offline): each is registered under its file name, which is what their $refs say.
    resources = [(file, Resource.from_contents(schema)) for file, schema in lint_resources().items()]
    registry = Registry().with_resources(resources)
    root = canonical_name(name)
    return Draft202012Validator({"$ref": SCHEMAS[root]}, registry=registry)


def validate(value: Any, name: str, file: str) -> list[Diagnostic]:
    """Validate a loaded value (node model) against schema ``name``; one diagnostic per problem. A
    value the compiled check accepts has none; any other gets jsonschema's own errors."""
    name = canonical_name(name)
    fast = _fast_checks()[name]
    if fast is not None and fast(value):
        return []
    return jsonschema_diagnostics(value, name, file)


def jsonschema_diagnostics(value: Any, name: str, file: str, by_item: bool = True) -> list[Diagnostic]:
    """``validate`` without the compiled check: jsonschema's errors, located and explained. For a list
    of rows (or patch entries) jsonschema walks only the items the compiled check rejects (``by_item``;
    False walks them all: the same errors, tests/test_schema_by_item.py)."""
    name = canonical_name(name)
    severity = load_schema(name).get("x-dshctl-severity", "error")
    errors = _errors(value, name) if by_item else _validator(name).iter_errors(to_plain(value))
    diags: list[Diagnostic] = []
    for error in errors:
        for relevant in _most_relevant(error):
            diags.extend(_to_diagnostics(relevant, value, file, severity))
    return sorted(set(diags), key=Diagnostic.sort_key)


_LIST_ONLY = frozenset({"$schema", "$comment", "$defs", "title", "description", "type", "items"})


@lru_cache(maxsize=None)
def _item_refs() -> dict[str, str]:
    """Schema name -> the absolute ``$ref`` of its items, for a schema that is a list and says nothing
    else about the list than its type (no ``minItems``, ``uniqueItems``, ``contains``, …): there an
    item's errors depend on that item alone, and the valid items have none."""
    out: dict[str, str] = {}
    for name, file in SCHEMAS.items():
        root = node = load_schema(name)
        for _ in range(4):  # a root that is only a local $ref to the list's definition
            ref = node.get("$ref")
            if not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref.count("/") == 2):
                break
            node = root.get("$defs", {}).get(ref.split("/")[2], {})
        items = node.get("items")
        if (node.get("type") == "array" and set(node) <= _LIST_ONLY and isinstance(items, dict)
                and set(items) == {"$ref"} and str(items["$ref"]).startswith("#/")):
            out[name] = file + items["$ref"]
    return out


@lru_cache(maxsize=None)
def _item_checks() -> dict[str, Any]:
    from dshctl.core.schemacheck import Unsupported, compile_refs

    try:
        return compile_refs(lint_resources(), list(_item_refs().values()))
    except Unsupported:
        return {}


def _errors(value: Any, name: str):
    validator = _validator(name)
    ref = _item_refs().get(name)
    item_ok = _item_checks().get(ref) if ref else None
    if item_ok is None or not isinstance(value, list):
        return validator.iter_errors(to_plain(value))
    item_schema = {"$ref": ref}
    return (error for index, item in enumerate(value) if not item_ok(item)
            for error in validator.descend(to_plain(item), item_schema, path=index))


# ---------------------------------------------------------------------------------------------
# choosing the error to report


def _most_relevant(error) -> list:
    """Descend through anyOf/oneOf into the branch the instance was aiming at; all its errors."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [error]
    by_branch: dict[int, list] = {}
    for sub in error.context:
        by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
    aimed = [errs for errs in by_branch.values()
             if not any(not e.relative_path and e.validator in _DISCRIMINATORS for e in errs)]
    if not aimed:
        return [error]  # no branch fits: summarised by _none_matched
    if len(aimed) > 1:  # several plausible forms: let jsonschema's relevance decide
        from jsonschema.exceptions import best_match

        return _most_relevant(best_match([e for errs in aimed for e in errs]))
    return [found for sub in aimed[0] for found in _most_relevant(sub)]


def _none_matched(error) -> tuple[str, str | None]:
    """A one-line message for an instance that fits none of the anyOf/oneOf branches."""
    forms = []
    for sub in error.context:
        if not sub.relative_path and sub.validator in _DISCRIMINATORS:
            title = sub.schema.get("title") if isinstance(sub.schema, dict) else None
            form = title or _type_word(sub.schema)
            if form and form not in forms:
                forms.append(form)
    what = _describe(error.instance)
    message = f"{what} matches none of the allowed forms: " + " or ".join(forms) if forms \
        else f"{what} is not valid here"
    return message, _hint(error.schema)


def _type_word(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return json.dumps(schema["const"])
    t = schema.get("type")
    if isinstance(t, list):
        return " or ".join(t)
    return t


def _describe(instance: Any) -> str:
    if isinstance(instance, dict):
        return "a !!js expression" if set(instance) == {"__jsExpr"} else "this mapping"
    if isinstance(instance, list):
        return "this list"
    return json.dumps(instance, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# error -> diagnostics


def _to_diagnostics(error, root: Any, file: str, severity: str) -> Iterable[Diagnostic]:
    path = list(error.absolute_path)
    json_path = format_json_path(path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in allowed:
                known = ", ".join(sorted(allowed))
                yield Diagnostic.at(key_loc(root, path, key), RULE, severity,
                                    f"unknown key {key!r}", json_path=format_json_path(path + [key]),
                                    hint=f"remove it; the known keys are {known}", file=file)
        return
    if error.validator in ("anyOf", "oneOf") and error.context:
        message, hint = _none_matched(error)
    else:
        message, hint = _message(error), _hint(error.schema)
    where = node_loc(root, path) or Loc(file, 1, 1)  # a bare scalar document has no position
    yield Diagnostic.at(where, RULE, severity, message, hint=hint,
                        json_path=json_path, file=file)


_TYPE_WORDS = {"array": "a list", "object": "a mapping", "string": "a string", "boolean": "a boolean",
               "number": "a number", "integer": "an integer", "null": "null"}


def _message(error) -> str:
    if error.validator == "type":
        expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        if isinstance(error.instance, dict) and set(error.instance) == {"__jsExpr"}:
            return f"a !!js expression is not allowed here (expected {words})"
        return f"expected {words}, got {_got(error.instance)}"
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = [k for k in error.validator_value if k not in (error.instance or {})]
        if missing:
            return f"missing required key {missing[0]!r}"
    return error.message


def _got(instance: Any) -> str:
    if isinstance(instance, dict):
        return "a mapping"
    if isinstance(instance, list):
        return "a list"
    from dshctl.core.yaml.jsyaml import JsBinary, JsDate  # js-yaml's default schema (preset.yml)

    if isinstance(instance, JsDate):
        return f"a date ({instance.text}; quote it to keep it text)"
    if isinstance(instance, JsBinary):
        return "binary data (!!binary)"
    return json.dumps(instance, ensure_ascii=False)


def _hint(schema: Any) -> str | None:
    """The first sentence of the schema's description: the same text an editor shows on hover."""
    if not isinstance(schema, dict) or not schema.get("description"):
        return None
    text = schema["description"]
    cut = text.find(". ")
    return text if cut < 0 else text[: cut + 1]


def node_loc(root: Any, path: list) -> Loc | None:
    """Where the node at ``path`` starts (the deepest known position along the way)."""
    node, loc = root, getattr(root, "loc", None)
    for step in path:
        if isinstance(node, YMap) and step in node:
            loc = node.value_locs.get(step) or loc
            node = node[step]
        elif isinstance(node, YList) and isinstance(step, int) and step < len(node):
            loc = node.loc_of(step) or loc
            node = node[step]
        elif isinstance(node, JsExpr):
            return node.loc or loc
        else:
            break
    return loc


def key_loc(root: Any, path: list, key: str) -> Loc | None:
    """Where ``key`` of the mapping at ``path`` is written."""
    node = root
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return node_loc(root, path)
    if isinstance(node, YMap):
        return node.key_loc(key)
    return node_loc(root, path)


def format_json_path(path: list) -> str:
    out = "$"
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _IDENT.match(str(step)):
            out += f".{step}"
        else:
            out += f"[{json.dumps(step, ensure_ascii=False)}]"
    return out
