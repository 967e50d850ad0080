"""js-yaml 4.2.0's loader, ported function for function, for the verdicts dsh's users see.

dsh reads every YAML file with js-yaml, and where a file is broken the text it shows is js-yaml's first
message line with js-yaml's position (``bad indentation of a mapping entry (2:8)``). ruamel, which
dshctl's fast loader (``dialect``) is built on, words and places its errors differently and accepts or
refuses a few inputs js-yaml does not. So when ``dialect`` fails, this port re-reads the text and its
error is the one reported; and ``preset.yml`` (tiny files, read by dsh with js-yaml's default schema,
where ``2024-01-01`` is a date) is loaded by this port outright.

The port walks a UTF-16 image of the text (JavaScript strings are UTF-16) so columns count what
js-yaml counts. Values are plain Python: dict, list, str, int/float, bool, None, ``JsDate`` for a
timestamp and ``{"__jsExpr": text}`` for ``!!js``. ``tests/test_jsyaml_errors.py`` holds it against the
real js-yaml.

Modules, in js-yaml's own order: ``types`` (schemas, resolvers, errors), ``scanner`` (state,
whitespace, scalars), ``collections``, ``loader`` (documents, properties, ``compose``). May import only
sibling ``core.yaml`` modules (scalars, jsvalue, utf16).
"""
from __future__ import annotations

from typing import Any

from dshctl.core.yaml.utf16 import from_utf16

from .loader import Loader
from .types import (DATE, DEFAULT, ENTRY_LIST, JSON, MAX_DEPTH, TIMESTAMP, JsBinary, JsDate, JsYamlError,
                    Schema)

__all__ = ["DATE", "DEFAULT", "ENTRY_LIST", "JSON", "MAX_DEPTH", "TIMESTAMP", "JsBinary", "JsDate", "JsYamlError",
           "Schema", "first_error", "load"]


def load(text: str, schema: Schema = ENTRY_LIST) -> Any:
    """``yaml.load(text, {schema})``; raises JsYamlError as js-yaml throws."""
    loader = Loader(text, schema)
    docs = loader.documents()
    if not docs:
        return None
    if len(docs) > 1:  # js-yaml's message has no position; where the second document starts is kept
        raise JsYamlError("expected a single document in the stream, but found more",
                          where=loader.doc_starts[1])
    return _from_image(docs[0])


def first_error(text: str, schema: Schema = ENTRY_LIST) -> JsYamlError | None:
    """js-yaml's error for ``text``, or None when js-yaml loads it."""
    try:
        load(text, schema)
    except JsYamlError as err:
        return err
    except RecursionError:  # far deeper than js-yaml's own depth limit allows anyway
        return JsYamlError(f"nesting exceeded maxDepth ({MAX_DEPTH})")
    return None


def _from_image(value: Any) -> Any:
    if isinstance(value, str):
        return from_utf16(value)
    if isinstance(value, dict):
        return {from_utf16(k): _from_image(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_image(v) for v in value]
    return value
