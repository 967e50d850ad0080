"""Plugin resolution for the Python host: a row's ``name`` to a plugin object (docs/runtime.md).

Order: built-ins (``cordis:group``, ``cordis:include``); ``./x`` / ``../x`` beside the file that
declared the row; absolute paths; then for a bare name the plugins dshctl ships, installed entry
points in the group ``dshctl.plugins``, and bundles whose ``package.json`` declares ``dsh.python``.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import sys
import types
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable

from dshctl.errors import Loc

from .errors import LoaderError, PluginUnavailable

# Shipped plugin name -> module (written by the host; imported lazily, on first use).
SHIPPED_PLUGINS: dict[str, str] = {
    "@dshctl/logger": "dshctl.host.plugins.logger",
    "@dshctl/timer": "dshctl.host.plugins.timer",
    "@dshctl/http": "dshctl.host.plugins.http",
    "@dshctl/status-page": "dshctl.host.plugins.status_page",
    "@dshctl/tools": "dshctl.host.plugins.tools",
    "@dshctl/agent-presets": "dshctl.host.plugins.agent_presets",
    "@dshctl/llm-script": "dshctl.agents.llm.script",
    "@dshctl/llm-openai": "dshctl.agents.llm.openai",
    "@dshctl/llm-deepseek": "dshctl.agents.llm.deepseek",
    "@dshctl/agents": "dshctl.agents.loop.registry",
    "@dshctl/agent-loop": "dshctl.agents.loop.plugin",
    "@dshctl/loop-guard": "dshctl.agents.loop.guard",
    "@dshctl/subagents": "dshctl.agents.subagents.plugin",
    "@dshctl/subagent-tools": "dshctl.agents.subagents.tool_row",
    "@dshctl/subagent-tool": "dshctl.agents.subagents.delegation_row",
    "@dshctl/agent-team": "dshctl.agents.teams.plugin",
    "@dshctl/agent-team-tools": "dshctl.agents.teams.tool_row",
    "@dshctl/fs-tools": "dshctl.agents.tools.fs",
    "@dshctl/ask-user": "dshctl.agents.tools.ask",
    "@dshctl/tool-fs": "dshctl.agents.tools.file_tools",
    "@dshctl/tool-fs-search": "dshctl.agents.tools.search",
    "@dshctl/tool-bash": "dshctl.agents.tools.shell",
    "@dshctl/tool-todo": "dshctl.agents.tools.todo",
    "@dshctl/tool-skill": "dshctl.agents.tools.skill",
    "@dshctl/session-title": "dshctl.agents.llm.title",
    "@dshctl/plan-mode": "dshctl.agents.tools.plan",
    "@dshctl/tool-str-replace-editor": "dshctl.agents.tools.editor",
    "@dshctl/code-mode": "dshctl.agents.codemode.plugin",
    "@dshctl/sandbox": "dshctl.agents.sandbox.plugin",
    "@dshctl/approval": "dshctl.agents.approval.plugin",
    "@dshctl/compaction-basic": "dshctl.agents.compaction.basic",
    "@dshctl/command-compact": "dshctl.agents.compaction.command",
    "@dshctl/tool-result-pruner": "dshctl.agents.compaction.pruner",
    "@dshctl/workspace": "dshctl.agents.workspace",
}
ENTRY_POINT_GROUP = "dshctl.plugins"
MODULE_PACKAGE = "dshctl_plugins"
PY_SUFFIXES = ("", ".py", "/__init__.py")
NODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def module_name_for(path: Path) -> str:
    """The stable ``sys.modules`` name of a plugin file, so hot reload can find and replace it."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    return f"{MODULE_PACKAGE}.m{digest}"


def load_module_file(path: Path) -> types.ModuleType:
    """Import ``path`` (a ``.py`` file or a package ``__init__.py``), reusing ``sys.modules``."""
    name = module_name_for(path)
    cached = sys.modules.get(name)
    if cached is not None:
        return cached
    if MODULE_PACKAGE not in sys.modules:
        package = types.ModuleType(MODULE_PACKAGE)
        package.__path__ = []  # a namespace for plugin files; never searched
        sys.modules[MODULE_PACKAGE] = package
    search = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # never leave a half-executed module behind
        raise
    return module


def plugin_of(module: Any) -> Any:
    """A module's ``plugin`` attribute, else the module itself (it must have ``apply``)."""
    plugin = getattr(module, "plugin", None)
    if plugin is not None:
        return plugin
    if callable(getattr(module, "apply", None)):
        return module
    raise LoaderError(f"module {getattr(module, '__name__', module)} has no `apply` and no `plugin`",
                      hint="a Python plugin module defines apply(ctx, config), or exports `plugin`")


def split_specifier(name: str) -> tuple[str, str]:
    """``@scope/pkg/sub`` -> (``@scope/pkg``, ``sub``); ``pkg/sub`` -> (``pkg``, ``sub``)."""
    parts = name.split("/")
    take = 2 if name.startswith("@") else 1
    return "/".join(parts[:take]), "/".join(parts[take:])


class PluginResolver:
    """Resolves names for one host. ``builtins`` maps ``cordis:<key>`` to plugin objects;
    ``profile_dir`` adds the profile's ``node_modules`` for rows declared outside it (``--patch``)."""

    def __init__(self, *, home: Path | None = None, builtins: dict[str, Any] | None = None,
                 shipped: dict[str, str] | None = None, profile_dir: Path | None = None):
        self.home = home
        self.profile_dir = Path(profile_dir) if profile_dir is not None else None
        self.builtins = dict(builtins or {})
        self.shipped = SHIPPED_PLUGINS if shipped is None else shipped
        self._entry_points: dict[str, Callable[[], Any]] | None = None

    def resolve(self, name: str, *, declared_in: Path, module_base: Path | None = None,
                row_id: str = "?", loc: Loc | None = None) -> Any:
        """The plugin object for ``name``; ``declared_in`` is the directory for ``./`` names and
        ``module_base`` the one bare names resolve from (a preset tree passes the host base)."""
        if name in self.builtins:
            return self.builtins[name]
        if name.startswith("cordis:"):
            raise self._unavailable(name, row_id, loc, "unknown built-in")
        if name.startswith(("./", "../")) or Path(name).is_absolute():
            return self._from_path((declared_in / name).resolve() if not Path(name).is_absolute()
                                   else Path(name), name, row_id, loc)
        return self._bare(name, module_base or declared_in, row_id, loc)

    # ---- files -----------------------------------------------------------------------------------
    def _from_path(self, target: Path, name: str, row_id: str, loc: Loc | None) -> Any:
        if target.suffix in NODE_SUFFIXES:  # a Node module, whether or not it is on disk
            raise self._unavailable(name, row_id, loc, "a JavaScript module")
        for suffix in PY_SUFFIXES:
            candidate = Path(str(target) + suffix)
            if candidate.is_file() and candidate.suffix == ".py":
                return plugin_of(load_module_file(candidate))
        if target.exists() or any(Path(str(target) + s).exists() for s in NODE_SUFFIXES):
            raise self._unavailable(name, row_id, loc, "the file is not a Python module")
        raise LoaderError(f'plugin "{name}" of row {row_id} not found: {target}', loc=loc,
                          hint="relative names resolve beside the file that declared the row")

    # ---- bare names --------------------------------------------------------------------------------
    def _bare(self, name: str, base: Path, row_id: str, loc: Loc | None) -> Any:
        module = self.shipped.get(name)
        if module is not None:
            return plugin_of(importlib.import_module(module))
        loader = self._entry_point(name)
        if loader is not None:
            target = loader()
            return plugin_of(target) if isinstance(target, types.ModuleType) else target
        found = self._bundle(name, base)
        if found is not None:
            return plugin_of(load_module_file(found))
        raise self._unavailable(name, row_id, loc, "probably a Node plugin")

    def _entry_point(self, name: str) -> Callable[[], Any] | None:
        # scanning installed distributions is slow: once per resolver (one host run)
        if self._entry_points is None:
            self._entry_points = {ep.name: ep.load for ep in entry_points(group=ENTRY_POINT_GROUP)}
        return self._entry_points.get(name)

    def _bundle(self, name: str, base: Path) -> Path | None:
        package, subpath = split_specifier(name)
        for root in self._node_module_roots(base):
            manifest = root / package / "package.json"
            if not manifest.is_file():
                continue
            declared = _python_modules(manifest, package)
            module = declared.get(name)
            if module is not None:
                return (manifest.parent / module).resolve()
            return None  # Node resolution stops at the first package found
        return None

    def _node_module_roots(self, base: Path) -> list[Path]:
        """Node's lookup: ``node_modules`` in the declaring directory and each ancestor (a bundle's
        rows find its sibling bundles this way), then the profile's, then ``$DSH_HOME/profiles``'."""
        base = Path(base)
        roots = [d / "node_modules" for d in (base, *base.parents) if d.name != "node_modules"]
        extra = [self.profile_dir / "node_modules"] if self.profile_dir is not None else []
        if self.home is not None:
            extra.append(Path(self.home) / "profiles" / "node_modules")
        return roots + [root for root in extra if root not in roots]

    @staticmethod
    def _unavailable(name: str, row_id: str, loc: Loc | None, why: str) -> PluginUnavailable:
        return PluginUnavailable(
            f'no Python implementation for plugin "{name}" (row {row_id}; {why})', loc=loc,
            hint="dshctl's host runs Python plugins only (shipped @dshctl/*, entry points in "
                 "'dshctl.plugins', or a bundle's package.json dsh.python); --skip-unavailable "
                 "runs the other rows")


def _python_modules(manifest: Path, package: str) -> dict[str, str]:
    """``dsh.python`` of a package.json: specifier -> module path (relative to the package)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise LoaderError(f"cannot read {manifest}: {err}", loc=Loc(str(manifest))) from None
    declared = (data.get("dsh") or {}).get("python") if isinstance(data, dict) else None
    if isinstance(declared, str):
        return {package: declared}
    if isinstance(declared, dict):
        return {k: v for k, v in declared.items() if isinstance(v, str)}
    return {}
