"""What the server tells about keys and values, from the shipped schemas and dsh's semantics.

Row keys come from the schemas' descriptions (entry-list ``row``, cordis.patch ``override`` and
``insert``, preset.yml); ``disabled`` values are described as dsh reads them: JavaScript truthiness
of the loaded value, so a quoted ``"false"`` disables the row.
"""
from __future__ import annotations

from dshctl.core.schemas import load_schema
from dshctl.core.yaml import filekinds as fk


def key_docs(kind: str, *, under_insert: bool = False, top_level: bool = True) -> dict[str, str]:
    """Key -> description for an item of a document of ``kind`` (a row, a patch entry, preset.yml)."""
    if kind == fk.PRESET:
        return _props(load_schema("preset"))
    row = _props(load_schema("entry-list")["$defs"]["row"])
    if kind != fk.PATCH_LIST or under_insert or not top_level:
        return row
    patch = load_schema("cordis.patch")["$defs"]
    out = dict(_props(patch["override"]))
    out["insert"] = _props(patch["insert"])["insert"]
    return out


def _props(schema: dict) -> dict[str, str]:
    return {k: v.get("description", "") for k, v in schema.get("properties", {}).items()}


def read_disabled(text: str) -> str:
    """How dsh reads ``disabled: <text>`` (one line of Markdown)."""
    from dshctl.core.yaml.dialect import load_yaml
    from dshctl.core.yaml.nodes import JsExpr, js_truthy
    from dshctl.errors import ParseError

    try:
        doc = load_yaml(f"v: {text}\n", "<hover>")
    except ParseError as err:
        return f"`{text}` does not parse: {err.message}"
    value = doc.value.get("v") if isinstance(doc.value, dict) else None
    if isinstance(value, JsExpr):
        return ("a `!!js` expression: dsh evaluates it when the row mounts; a truthy result disables "
                "the row (dshctl's host evaluates the subset in docs/jsexpr.md)")
    import json

    shown = f"the string {json.dumps(value)}" if isinstance(value, str) else json.dumps(value)
    verdict = "disables the row" if js_truthy(value) else "leaves the row enabled"
    note = ""
    if isinstance(value, str):
        note = (f" — a string, not a boolean: JavaScript reads every non-empty string as true, so "
                f"`{text}` {verdict} (`dshctl lint` flags it; write `true` or `false`)")
    elif value is None:
        note = " — assigned verbatim; dsh treats it as enabled"
    elif not isinstance(value, bool):
        note = " — a number, read as JavaScript truthiness (0 and NaN are false; lint wants a boolean)"
    return f"dsh reads `disabled: {text}` as {shown}: it {verdict}{note}"
