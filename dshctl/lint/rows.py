"""Walk the rows of entry lists and patch lists (shared by the row-level rules)."""
from __future__ import annotations

from typing import Any, Iterator

from dshctl.core.yaml import filekinds
from dshctl.core.yaml.nodes import JsExpr
from dshctl.core.schemas import format_json_path

NodePath = list  # keys/indices from the document root


def _child_rows(row: dict, path: NodePath) -> Iterator[tuple[dict, NodePath]]:
    config = row.get("config")
    if row.get("group") is True and isinstance(config, list):
        yield from _rows_in(config, path + ["config"])


def _rows_in(items: list, path: NodePath) -> Iterator[tuple[dict, NodePath]]:
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield item, path + [i]
            yield from _child_rows(item, path + [i])


def iter_rows(kind: str, value: Any) -> Iterator[tuple[dict, NodePath]]:
    """Every plugin row a file defines, group children included: the rows of an entry list, or the
    rows a patch list inserts."""
    if not isinstance(value, list):
        return
    if kind == filekinds.ENTRY_LIST:
        yield from _rows_in(value, [])
    elif kind == filekinds.PATCH_LIST:
        for i, patch in enumerate(value):
            if isinstance(patch, dict) and isinstance(patch.get("insert"), list):
                yield from _rows_in(patch["insert"], [i, "insert"])


def iter_overrides(value: Any) -> Iterator[tuple[dict, NodePath]]:
    """The override entries of a patch list (mappings without ``insert``)."""
    if isinstance(value, list):
        for i, patch in enumerate(value):
            if isinstance(patch, dict) and "insert" not in patch:
                yield patch, [i]


def iter_js(value: Any, path: NodePath) -> Iterator[tuple[JsExpr, NodePath]]:
    """Every ``!!js`` node inside ``value``."""
    if isinstance(value, JsExpr):
        yield value, path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from iter_js(v, path + [k])
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from iter_js(v, path + [i])


def jp(path: NodePath) -> str:
    return format_json_path(path)
