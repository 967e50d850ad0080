"""The two-phase swap of a module reload (cordis-runtime.md §10.2, P Alg. 10).

Phase A imports every stale plugin module afresh with the accepted modules popped from ``sys.modules``;
nothing is disposed yet, so an import or syntax error only has to restore the cache. Phase B replaces
each affected row's fiber: the old fiber's disposal is awaited first (§12.4), then the new plugin is
plugged with the row's raw config; the entry keeps its id. A phase B failure restores the cache and
rebuilds every affected row from the old plugin.
"""
from __future__ import annotations

import importlib
import sys
import time
from typing import TYPE_CHECKING, Any

from dshctl.loader.errors import cause_text
from dshctl.loader.resolve import MODULE_PACKAGE, load_module_file, plugin_of

from .hmr_graph import RELOAD_EVENT, module_file

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host


def _import_fresh(name: str, old: Any) -> Any:
    if name.startswith(MODULE_PACKAGE + "."):
        return load_module_file(module_file(old))
    return importlib.import_module(name)


def restore_cache(backup: dict[str, Any], before: set[str]) -> None:
    """Exactly the old module objects, no module phase A added, and parents re-bound to them."""
    for name in set(sys.modules) - before:
        sys.modules.pop(name, None)
    for name, module in backup.items():
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)


async def _replug(host: "Host", entries: list, plugin: Any) -> None:
    for entry in entries:
        owner = host.loader_of(entry)
        await owner.dispose_entry(entry)
        entry.plugin = plugin
        if not entry.disabled and entry.skipped is None:
            owner.plug(entry)


async def swap(host: "Host", plan: dict, files: set) -> dict:
    started = time.perf_counter()
    stale: list[str] = plan["stale"]
    before = set(sys.modules)
    backup = {n: sys.modules.pop(n) for n in sorted(plan["accepted"]) if n in sys.modules}
    old_plugins = {n: plugin_of(backup[n]) for n in stale}
    base = {"files": sorted(map(str, files)), "modules": stale}
    # ---- phase A: import ---------------------------------------------------------------------------
    try:
        new_plugins = {n: plugin_of(_import_fresh(n, backup[n])) for n in stale}
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, ImportError, anything the module raises
        restore_cache(backup, before)
        host.log.event("hmr/import-failed", f"module reload failed while importing: {cause_text(exc)}; "
                       "the old modules keep running", level="error")
        return {**base, "ok": False, "phase": "import", "error": cause_text(exc), "reloaded": []}
    # ---- phase B: swap -----------------------------------------------------------------------------
    entries = host.all_entries()
    affected = {n: [e for e in entries if e.plugin is old_plugins[n]] for n in stale}
    try:
        for name in stale:
            await _replug(host, affected[name], new_plugins[name])
    except BaseException as exc:  # noqa: BLE001 - rebuild from the old module whatever happened
        restore_cache(backup, before)
        for name in stale:
            await _replug(host, affected[name], old_plugins[name])
        host.log.event("hmr/swap-failed", f"module reload failed while swapping: {cause_text(exc)}; "
                       "the affected rows were rebuilt from the old modules", level="error")
        return {**base, "ok": False, "phase": "swap", "error": cause_text(exc), "reloaded": []}
    for name in stale:
        registry = host.root.registry
        if old_plugins[name] in registry:
            registry.delete(old_plugins[name])  # fibers the loader did not own (child plugins)
    reloaded = [e.full_id for n in stale for e in affected[n]]
    for name in stale:
        host.root.emit(RELOAD_EVENT, {"plugin": {"filename": str(module_file(sys.modules[name])),
                                                 "runtime": host.root.registry.get(new_plugins[name])}})
    ms = (time.perf_counter() - started) * 1000
    host.log.event("hmr/reloaded", f"reloaded {', '.join(stale)} ({len(reloaded)} row(s): "
                   f"{', '.join(reloaded) or 'none'}) in {ms:.0f} ms", rows=reloaded)
    return {**base, "ok": True, "reloaded": reloaded, "duration_ms": round(ms, 2)}
