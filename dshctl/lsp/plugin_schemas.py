"""A row's plugin, as the editor explains it: its description and its config schema.

Where the schema comes from is where the Python host reads it (``describe_plugin``: the plugin's
``schema`` or ``Config``). dshctl's own plugins (``@dshctl/*``) and installed entry points are imported,
as the host imports them: that code is installed, not the document's. A bundle's Python module (its
``package.json`` ``dsh.python``) is read, never run: opening a file in an editor must not execute a
package it found under ``node_modules``; a top-level ``schema = {...}`` (or ``Config``) written as a
literal, with names bound to literals above it, ``**`` spreads and arithmetic, is what can be read that
way. A Node plugin's Schemastery config needs Node to evaluate: only its package's ``description``.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PluginDoc:
    name: str
    description: str  # Markdown, may be empty
    schema: dict | None  # the config's JSON Schema, None when unknown
    source: str  # where it was read: a file, or "dshctl" for a built-in
    note: str = ""  # why there is no schema, when there is none


NO_SCHEMA = "declares no config schema: its config is passed as written"
UNREADABLE = "its config schema is computed when the module runs (read, not run, here)"
NODE = "a Node plugin: its config schema needs Node to read"

BUILTIN_DOCS = {
    "cordis:group": "Cordis built-in: a group row; its `config` is a list of rows mounted under it "
                    "(a disabled group stays mounted, its children unmount).",
    "cordis:include": "Cordis built-in: mounts the rows of another entry-list file (`config.path`).",
}


def plugin_doc(name: str, declared_in: Path, profile_dir: Path | None = None,
               home: Path | None = None) -> PluginDoc | None:
    """What is known about plugin ``name`` for a row declared in directory ``declared_in``."""
    if name in BUILTIN_DOCS:
        return PluginDoc(name, BUILTIN_DOCS[name], None, "Cordis")
    from dshctl.loader.resolve import SHIPPED_PLUGINS

    if name in SHIPPED_PLUGINS:
        return _imported(name, SHIPPED_PLUGINS[name])
    if name.startswith(("./", "../")) or os.path.isabs(name):
        return _from_file(name, (declared_in / name).resolve(), None)
    found = _bundle_module(name, declared_in, profile_dir, home)
    if found is not None:
        return found
    return _entry_point(name)


@lru_cache(maxsize=None)
def _imported(name: str, module_name: str) -> PluginDoc | None:
    import importlib

    from dshctl.loader.resolve import plugin_of

    try:
        return _described(name, plugin_of(importlib.import_module(module_name)), f"dshctl's `{module_name}`")
    except Exception:  # an optional dependency missing: no docs, not a broken server
        return None


@lru_cache(maxsize=None)
def _entry_point(name: str) -> PluginDoc | None:
    from importlib.metadata import entry_points

    from dshctl.loader.resolve import ENTRY_POINT_GROUP, plugin_of

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                target = ep.load()
                plugin = plugin_of(target) if inspect.ismodule(target) else target
                return _described(name, plugin, f"entry point `{ep.value}`")
            except Exception:  # a broken installed package: no docs
                return None
    return None


def _described(name: str, plugin: Any, source: str) -> PluginDoc:
    from dshctl.runtime.plugin import describe_plugin

    schema = describe_plugin(plugin).schema
    note = NO_SCHEMA if schema is None else "" if isinstance(schema, dict) else "its config is checked by code"
    return PluginDoc(name, first_paragraph(inspect.getdoc(plugin) or "", name),
                     schema if isinstance(schema, dict) else None, source, note)


def _bundle_module(name: str, base: Path, profile_dir: Path | None, home: Path | None) -> PluginDoc | None:
    """Node's lookup from ``base`` (as the host's resolver does it); the first package found decides."""
    from dshctl.loader.resolve import split_specifier

    package, _ = split_specifier(name)
    roots = [d / "node_modules" for d in (base, *base.parents) if d.name != "node_modules"]
    if profile_dir is not None:
        roots.append(profile_dir / "node_modules")
    if home is not None:
        roots.append(home / "profiles" / "node_modules")
    for root in roots:
        manifest = root / package / "package.json"
        if manifest.is_file():
            return _from_manifest(name, package, manifest)
    return None


def _from_manifest(name: str, package: str, manifest: Path) -> PluginDoc | None:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    described = data.get("description") if name == package and isinstance(data.get("description"), str) else ""
    declared = (data.get("dsh") or {}).get("python") if isinstance(data.get("dsh"), dict) else None
    modules = {package: declared} if isinstance(declared, str) else declared if isinstance(declared, dict) else {}
    module = modules.get(name)
    if not isinstance(module, str):
        return PluginDoc(name, described, None, str(manifest), NODE)
    return _from_file(name, (manifest.parent / module).resolve(), described)


def _from_file(name: str, target: Path, fallback: str | None) -> PluginDoc | None:
    for candidate in (target, Path(str(target) + ".py"), target / "__init__.py"):
        if candidate.is_file() and candidate.suffix == ".py":
            doc, schema, assigned = read_module(str(candidate), candidate.stat().st_mtime_ns)
            note = "" if schema is not None else UNREADABLE if assigned else NO_SCHEMA
            return PluginDoc(name, first_paragraph(doc, name) or (fallback or ""), schema, str(candidate), note)
    return None if fallback is None else PluginDoc(name, fallback, None, str(target), NODE)


@lru_cache(maxsize=64)
def read_module(path: str, mtime_ns: int) -> tuple[str, dict | None, bool]:
    """(docstring, schema, whether the module assigns one) of a Python plugin file, read without running
    it (``mtime_ns`` keys the cache)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, SyntaxError, ValueError):
        return "", None, False
    bound: dict[str, Any] = {}
    schema, assigned = None, False
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, node = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, node = stmt.target.id, stmt.value
        else:
            continue
        assigned = assigned or target in ("schema", "Config")
        try:
            bound[target] = literal(node, bound)
        except ValueError:
            bound.pop(target, None)
            continue
        if target in ("schema", "Config"):
            # describe_plugin prefers Config; a later assignment replaces an earlier one
            if target == "Config" or "Config" not in bound:
                schema = bound[target]
    return ast.get_docstring(tree) or "", schema if isinstance(schema, dict) else None, assigned


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b}  # no **: 9**9**9 would hang


def literal(node: ast.AST, bound: dict[str, Any]) -> Any:
    """The value of a literal expression; names must be bound (to literals) above. ValueError otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in bound:
            return bound[node.id]
        raise ValueError(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e, bound) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict = {}
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**other}
                spread = literal(value, bound)
                if not isinstance(spread, dict):
                    raise ValueError("spread")
                out.update(spread)
            else:
                out[literal(key, bound)] = literal(value, bound)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = literal(node.operand, bound)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = literal(node.left, bound), literal(node.right, bound)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            return _OPS[type(node.op)](left, right)
    raise ValueError(type(node).__name__)


def first_paragraph(text: str, name: str = "") -> str:
    """A docstring's first paragraph, without the plugin's name it usually opens with."""
    first = " ".join(text.strip().split("\n\n", 1)[0].split())
    for quoted in (f"``{name}``", f"`{name}`", name):
        if name and first.startswith(quoted) and first[len(quoted):len(quoted) + 1] in (":", " "):
            return first[len(quoted):].lstrip(": ").strip()
    return first
