"""The ``Loader`` the host uses: mounts the root tree under its own fiber, merges row injects, wires
``!!js`` config evaluation and write-back into the runtime, and tears everything down LIFO."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

from dshctl.core.home import resolve_home
from dshctl.runtime import Context, Fiber
from dshctl.runtime.plugin import normalize_inject

from .entry import Entry, declared_dir
from .group import GROUP_NAME, GROUP_PLUGIN
from .jshooks import evaluate_row_config
from .report import UpdateReport
from .resolve import PluginResolver
from .snapshot import snapshot_rows
from .tree import Tree

READY = "loader/ready"  # hidden inject of rows gated by `intercept: {loader: {await: true}}`


class Loader:
    def __init__(self, ctx: Context | None = None, *, home: Path | None = None,
                 skip_unavailable: bool = False, resolver: PluginResolver | None = None):
        from .include import INCLUDE_NAME, IncludePlugin
        self.ctx = ctx if ctx is not None else Context()
        self.home = Path(home) if home is not None else resolve_home()
        self.skip_unavailable = skip_unavailable
        self.resolver = resolver or PluginResolver(home=self.home)
        self.resolver.builtins.setdefault(GROUP_NAME, GROUP_PLUGIN)
        self.resolver.builtins.setdefault(INCLUDE_NAME, IncludePlugin(self))
        self.fibers: dict[Fiber, Entry] = {}   # every row's root fiber -> its entry
        self.tree: Tree | None = None
        self.busy = 0
        self.booting = False     # during start(): failed rows stay FAILED and are reported
        self._fiber: Fiber | None = None
        self._plugging: Entry | None = None
        self._gated: dict[Fiber, None] = {}

    # ---- the host API ------------------------------------------------------------------------------
    @property
    def root_ctx(self) -> Context:
        if self._fiber is None:
            raise RuntimeError("the loader has no context before start()")
        return self._fiber.ctx

    async def start(self, rows: Any, *, base_dir: Path) -> UpdateReport:
        """Mount ``rows``; rows whose apply fails stay FAILED and are reported (dsh's boot audit)."""
        if self.tree is not None:
            raise RuntimeError("Loader.start() was called already; use update()")
        if self._fiber is None or self._fiber.uid is None:
            self._fiber = self.ctx.plugin(_LoaderPlugin(self))
            await self._fiber
        self.tree = Tree(self, self.root_ctx, Path(base_dir).resolve())
        self.booting = True
        try:
            return await self.tree.update(rows, boot=True)
        except BaseException:
            self.tree = None  # nothing was mounted: start() may be called again
            raise
        finally:
            self.booting = False

    async def update(self, rows: Any) -> UpdateReport:
        """Reconcile with ``rows``: succeeds fully or restores the previous tree and raises."""
        if self.tree is None:
            raise RuntimeError("Loader.update() before a successful start()")
        return await self.tree.update(rows)

    def resolve(self, full_id: str) -> Entry | None:
        return self.tree.resolve(full_id) if self.tree is not None else None

    def entries(self) -> list[Entry]:
        return self.tree.order() if self.tree is not None else []

    def tree_snapshot(self) -> list[dict]:
        return snapshot_rows(self.tree.roots) if self.tree is not None else []

    async def stop(self) -> None:
        """Dispose every row, newest first, then the loader's own fiber. Idempotent."""
        if self.tree is not None:
            await self.dispose_tree(self.tree)
        if self._fiber is not None:
            await self._fiber.dispose()

    # ---- used by trees and transactions ---------------------------------------------------------------
    def resolve_plugin(self, tree: Tree, row: dict, full_id: str) -> Any:
        return self.resolver.resolve(row["name"], declared_in=declared_dir(row, tree.base_dir),
                                     module_base=tree.module_base, row_id=full_id,
                                     loc=row.loc_of("name") if hasattr(row, "loc_of") else None)

    def config_for(self, entry: Entry) -> Any:
        return None if entry.is_group else entry.options.get("config")

    def plug(self, entry: Entry) -> Fiber:
        ctx = entry.context()
        self._plugging = entry
        try:
            fiber = ctx.plugin(entry.plugin, self.config_for(entry))
        finally:
            self._plugging = None
        entry.fiber = fiber
        self.fibers[fiber] = entry
        return fiber

    async def dispose_entry(self, entry: Entry) -> None:
        fiber = entry.fiber
        if fiber is None:
            return
        entry.fiber = None
        entry.disposing = True
        try:
            await fiber.dispose()
        finally:
            entry.disposing = False
            self.fibers.pop(fiber, None)
            self._gated.pop(fiber, None)

    async def dispose_tree(self, tree: Tree) -> None:
        for entry in reversed(tree.order()):
            await self.dispose_entry(entry)

    @contextlib.contextmanager
    def task(self) -> Iterator[None]:
        """A loader task is running: gated rows wait (cordis-runtime.md §3 "loader gate")."""
        self.busy += 1
        try:
            yield
        finally:
            self.busy -= 1
            if not self.busy:
                for fiber in list(self._gated):
                    if fiber.uid is None:
                        del self._gated[fiber]  # disposed along with its tree
                    else:
                        fiber._refresh_epoch()  # the gate's check() passes now

    # ---- runtime hooks -------------------------------------------------------------------------------
    def _on_plugin(self, fiber: Fiber) -> None:
        if fiber.uid is None:
            self._on_dispose(fiber)
            return
        entry, self._plugging = self._plugging, None
        if entry is None:
            return
        row_inject = normalize_inject(entry.options.get("inject"))
        fiber.inject.update(row_inject)
        gate = row_inject.get("loader") or entry.intercepts.get("loader")
        if isinstance(gate, dict) and gate.get("await"):
            fiber.inject[READY] = None
            self._gated[fiber] = None

    def _on_config(self, fiber: Fiber, config: Any) -> Any:
        entry = self.fibers.get(fiber)
        if entry is None or entry.is_group or entry.subtree is not None or _is_include(entry):
            return None  # child plugins, groups and includes keep their config literal
        return evaluate_row_config(fiber, config, home=self.home, full_id=entry.full_id, name=entry.name)

    async def _on_update(self, fiber: Fiber, config: Any, no_save: bool, next_):
        result = await next_()
        entry = self.fibers.get(fiber)
        if entry is not None and not no_save and fiber.error is None:
            entry.options["config"] = fiber.config  # write-back keeps `!!js` unevaluated
            entry.tree.schedule_write()
        return result

    def _on_dispose(self, fiber: Fiber) -> None:
        """A row's own fiber disposed by the plugin itself: the row becomes ``disabled: true``."""
        entry = self.fibers.get(fiber)
        if entry is None or entry.disposing or entry.fiber is not fiber or entry.tree.owner_gone():
            return
        self.fibers.pop(fiber, None)
        entry.fiber = None
        entry.disabled = True
        entry.options["disabled"] = True
        entry.tree.schedule_write()


def _is_include(entry: Entry) -> bool:
    from .include import INCLUDE_NAME
    return entry.options.get("name") == INCLUDE_NAME


class _LoaderPlugin:
    """The loader's own fiber: provides ``loader`` and the gate, and hooks the runtime's events."""

    name = "loader"

    def __init__(self, loader: Loader):
        self.loader = loader

    def apply(self, ctx: Context, config: Any) -> None:
        loader = self.loader
        ctx.provide("loader", loader)
        ctx.provide(READY, loader, check=lambda: loader.busy == 0)
        ctx.on("internal/plugin", loader._on_plugin)
        ctx.on("internal/config", loader._on_config)
        ctx.on("internal/update", loader._on_update, global_=True)
