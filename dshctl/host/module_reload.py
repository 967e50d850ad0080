"""Module hot reload (cordis-runtime.md §10.2, §12.6): a saved plugin module reloads the rows whose
import tree reaches it; import first, then swap; ``sys.modules`` backed up and restored; never
``importlib.reload``.

* The stash: saved files wait in it. A pass snapshots and clears it; on failure the snapshot is merged
  back, so the next save retries everything (item 76); saves during a pass stay for the next pass.
* An import or syntax error restores the cache and leaves the old fibers running untouched.
* A failure while swapping restores the cache and rebuilds every stale row from the old module.
* A change to dshctl itself cannot be hot-swapped: the host logs that a restart is needed.
"""
from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .hmr_graph import classify, stale_plugins
from .module_files import LoadedModules, is_framework
from .watch import PathWatcher

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host

DEBOUNCE_S = 0.1


def imported_names(module: Any, path: Path) -> set[str]:
    """What a module's source imports, as module names (static scan; both ``x.y`` and ``x``)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return set()
    package = getattr(module, "__package__", None) or ""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1] if package else []
                base = ".".join(anchor + ([base] if base else []))
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


class ModuleReloader:
    def __init__(self, host: "Host", *, debounce: float = DEBOUNCE_S):
        self.host = host
        self.debounce = debounce
        self.stash: set[Path] = set()
        self.lock = asyncio.Lock()
        self.passes = 0
        self.restart_required: list[str] = []
        self.last: dict | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task | None = None
        self.modules = LoadedModules()
        self.modules.sync()
        self.watcher = PathWatcher(self.watched_files(), self.on_change,
                                   on_error=lambda m: host.log.event("hmr/watch-error", m, level="error"))

    # ---- watching -----------------------------------------------------------------------------------
    def watched_files(self, names=None) -> set[Path]:
        """The files of the watched modules among ``names`` (default: every loaded module)."""
        modules = self.modules
        names = list(names) if names is not None else [n for n, _, _ in modules.with_files()]
        return {modules.path(n) for n in names if modules.is_watched(n)}

    async def start(self) -> None:
        self.watcher.start()
        await self.watcher.ready.wait()

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        await self.watcher.stop()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def refresh(self) -> None:
        """New plugin modules were imported (a config reload): watch them too. Only modules not seen
        before are examined (module_files.py)."""
        fresh = self.modules.sync()
        if fresh:
            self.watcher.add(self.watched_files(fresh))

    def on_change(self, paths: list[Path]) -> None:
        self.stash.update(p.resolve() for p in paths if p.exists())
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.debounce, self._schedule)

    def _schedule(self) -> None:
        self._timer = None
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self.stash:
            before = set(self.stash)
            try:
                await self.reload()
            except Exception as exc:  # noqa: BLE001 - never escape the watcher
                self.host.log.event("hmr/internal-error", f"{type(exc).__name__}: {exc}", level="error")
                return
            if self.stash == before:
                return  # a failed pass merged its files back: wait for the next save

    def summary(self) -> dict:
        return {"passes": self.passes, "stash": sorted(str(p) for p in self.stash),
                "restart_required": self.restart_required, "last": self.last}

    # ---- one pass --------------------------------------------------------------------------------------
    async def reload(self) -> dict:
        async with self.lock:
            self.passes += 1
            snapshot, self.stash = set(self.stash), set()
            result = await self._pass(snapshot)
            if not result["ok"]:
                self.stash |= snapshot  # the next save retries all of it (§12.6)
            self.last = result
            return result

    async def _pass(self, files: set[Path]) -> dict:
        self.modules.sync()
        by_file: dict[Path, list[str]] = {}
        for name, _, path in self.modules.with_files():
            by_file.setdefault(path, []).append(name)
        changed = {n for f in files for n in by_file.get(f, []) if not is_framework(n)}
        framework = sorted(str(f) for f in files if any(is_framework(n) for n in by_file.get(f, [])))
        if framework:
            self.restart_required = sorted(set(self.restart_required) | set(framework))  # until restarted
            self.host.log.event("hmr/restart-required", f"{', '.join(framework)} is part of dshctl itself; "
                                "restart the host to load it", level="warn", files=framework)
        if not changed:
            return {"ok": True, "reloaded": [], "files": sorted(map(str, files))}
        plan = self._plan(changed)
        if not plan["stale"]:
            return {"ok": True, "reloaded": [], "files": sorted(map(str, files))}
        from .module_swap import swap
        return await swap(self.host, plan, files)

    def _plan(self, changed: set[str]) -> dict:
        local = self.modules.local()
        framework = self.modules.framework()
        imports = {n: {d for d in imported_names(m, self.modules.path(n)) if d in local or d in framework}
                   for n, m in local.items()}
        accepted, declined = classify(changed, imports, framework, lambda n: n not in local and n not in framework)
        plugin_modules = self._plugin_modules(local)
        stale, accepted = stale_plugins(plugin_modules, imports, accepted, declined)
        return {"stale": stale, "accepted": accepted, "plugin_modules": plugin_modules}

    def _plugin_modules(self, local: dict) -> dict[str, Any]:
        """Module name -> module, for every local module that is some running row's plugin."""
        from dshctl.loader.resolve import plugin_of
        plugins = {id(e.plugin) for e in self.host.all_entries() if e.plugin is not None}
        out = {}
        for name, module in local.items():
            try:
                if id(plugin_of(module)) in plugins:
                    out[name] = module
            except Exception:  # noqa: BLE001 - a helper module without apply is not a plugin module
                continue
        return out
