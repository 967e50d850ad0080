"""The package layout cannot silently decay: import rules checked from the code's own imports (ast).

The rules are the ones docs/architecture.md draws: every package sits on a layer and imports only
from its own layer or below; nothing below ``cli/`` imports ``cli/``; no import cycles between the
modules of the service and CLI packages; ``core/`` holds at most eight loose modules; every package
says in its docstring what lives there and what it may import.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dshctl"

# Layer of each top-level part of the package (higher may import lower, never the reverse).
LAYERS = {
    "errors": 0, "terminal": 0, "records": 0, "__init__": 0,
    "core": 1,
    "runtime": 2, "lint": 2, "bundles": 2,
    "report": 3, "loader": 3, "lsp": 3,
    "agents": 4, "host": 5, "fleet": 6,
    "cli": 7, "__main__": 8,
    "shipped": 8,  # bundle data shipped for the host, resolved at run time, never imported
}
NO_CYCLES_IN = ("host", "bundles", "cli", "lint", "agents", "fleet")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str) -> set[str]:
    """The dshctl modules ``name`` imports, at any depth except under ``if TYPE_CHECKING:``."""
    path, is_package = MODULES[name]
    base = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    prefix = base[: len(base) - (child.level - 1)]
                    module = ".".join(prefix + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:
                    full = f"{module}.{alias.name}"
                    found.add(full if full in MODULES else module)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m == "dshctl" or m.startswith("dshctl.")}


GRAPH = {name: imports_of(name) for name in MODULES}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_part_of_the_package_has_a_layer():
    assert {_part(m) for m in MODULES} <= set(LAYERS)


def test_imports_point_down_or_sideways_within_a_layer():
    upward = [f"{m} -> {i}" for m, deps in GRAPH.items() for i in deps
              if _part(m) != _part(i) and LAYERS[_part(i)] > LAYERS[_part(m)]]
    assert upward == []


def test_nothing_below_cli_imports_cli():
    offenders = [f"{m} -> {i}" for m, deps in GRAPH.items() for i in deps
                 if _part(i) == "cli" and _part(m) not in ("cli", "__main__")]
    assert offenders == []


def test_core_imports_nothing_above_core():
    offenders = [f"{m} -> {i}" for m, deps in GRAPH.items() if _part(m) == "core" for i in deps
                 if _part(i) not in ("core", "errors", "terminal", "records", "__init__")]
    assert offenders == []


# Rooms of core/ and the rooms each may import (the loose modules of core/ are open to every room).
CORE_ROOMS = {
    "cache": {"cache"},
    "yaml": {"yaml"},
    "jsexpr": {"jsexpr", "yaml"},
    "compose": {"compose", "yaml", "jsexpr", "cache"},
    "presets": {"presets", "compose", "yaml", "jsexpr", "cache"},
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "core" else None


def test_rooms_of_core_import_only_the_rooms_below_them():
    offenders = [f"{m} -> {i}" for m, deps in GRAPH.items() if _room(m) for i in deps
                 if _room(i) and _room(i) not in CORE_ROOMS[_room(m)]]
    assert offenders == []


def test_loose_core_modules_import_no_room_but_yaml():
    # diagnostics, schemas, data, fsutil, home sit under every room; schemas reads files via the dialect.
    offenders = [f"{m} -> {i}" for m, deps in GRAPH.items()
                 if _part(m) == "core" and m.count(".") == 2 and not MODULES[m][1] for i in deps
                 if _room(i) not in (None, "yaml")]
    assert offenders == []


def _cycles(nodes: set[str]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), restricted to ``nodes``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v] & nodes:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            connect(v)
    return found


@pytest.mark.parametrize("part", NO_CYCLES_IN)
def test_no_import_cycles_between_modules(part):
    nodes = {m for m in MODULES if _part(m) == part}
    assert _cycles(nodes) == []


def test_the_cycle_finder_finds_a_cycle():
    # The check above could pass vacuously; prove it sees a real cycle in a graph made for it.
    saved = dict(GRAPH)
    try:
        GRAPH["x.a"], GRAPH["x.b"], GRAPH["x.c"] = {"x.b"}, {"x.a"}, {"x.a"}
        assert _cycles({"x.a", "x.b", "x.c"}) == [["x.a", "x.b"]]
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_the_lint_registry_knows_no_rule_module():
    assert not any(i.startswith("dshctl.lint.rules") for i in GRAPH["dshctl.lint.registry"])


def test_core_has_at_most_eight_loose_modules():
    loose = sorted(p.name for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 8, loose


def test_every_package_opens_with_a_docstring_that_says_what_it_may_import():
    missing = []
    for name, (path, is_package) in MODULES.items():
        if not is_package:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if "import" not in doc:
            missing.append(name)
    assert missing == []


def test_architecture_doc_names_every_subpackage():
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    packages = sorted(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py")
                      if p.parent != PACKAGE)
    missing = [p for p in packages if f"{p.rsplit('/', 1)[-1]}/" not in doc]
    assert missing == []
