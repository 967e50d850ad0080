"""A tree: one store of entries (local id -> entry) with its committed row list. The loader's root
is one tree; each ``cordis:include`` mounts another, whose full ids are ``<include id>:<local id>``."""
from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml.nodes import js_truthy
from dshctl.errors import DshctlError
from dshctl.runtime import CordisError, State
from dshctl.runtime.plugin import normalize_inject

from . import fastpath
from .entry import Entry
from .errors import LoaderError, LoaderUpdateError, PluginUnavailable, cause_text
from .jshooks import evaluate_disabled
from .plan import RowPlan, flatten
from .report import UpdateReport
from .transaction import Transaction

if TYPE_CHECKING:  # pragma: no cover
    from dshctl.runtime import Context

    from .loader import Loader


class Tree:
    incremental = True   # take the fast path when only rows in place changed (fastpath.py)

    def __init__(self, loader: "Loader", owner_ctx: "Context", base_dir: Path, *, prefix: str = "",
                 module_base: Path | None = None, source: Any = None):
        self.loader = loader
        self.owner_ctx = owner_ctx
        self.base_dir = Path(base_dir)
        self.prefix = prefix                 # "" for the root tree, "<include id>:" below it
        self.module_base = module_base       # where bare names resolve (a preset: the host base)
        self.source = source                 # the Include that owns this tree, if any
        self.store: dict[str, Entry] = {}
        self.roots: list[Entry] = []
        self._order: list[Entry] = []
        self.rows: list = []
        self.queue = asyncio.Lock()          # a group update is not re-entrant: one queue per tree
        self.last_report: UpdateReport | None = None
        self.recheck: set[str] = set()       # top-level ids the incremental path always plans
        self.root_ids: list[str] = []        # committed top-level ids, in order
        self.root_pos: dict[str, int] = {}   # top-level id -> its position
        self._full_ids: list[str] = []       # committed full ids in pre-order

    # ---- reading -------------------------------------------------------------------------------
    def order(self) -> list[Entry]:
        """Committed entries in pre-order (groups before their rows)."""
        return list(self._order)

    def order_view(self) -> list[Entry]:
        """:meth:`order` without the copy: read only."""
        return self._order

    def owner_gone(self) -> bool:
        fiber = self.owner_ctx.fiber
        return fiber.uid is None or fiber.state is State.UNLOADING

    def resolve(self, full_id: str) -> Entry | None:
        head, _, rest = full_id.partition(":")
        entry = self.store.get(head)
        if not rest or entry is None:
            return entry
        return entry.subtree.resolve(rest) if entry.subtree is not None else None

    # ---- updating ------------------------------------------------------------------------------
    async def update(self, rows: Any, *, boot: bool = False) -> UpdateReport:
        """Reconcile the committed rows with ``rows``: all of it, or none of it (raises)."""
        async with self.queue:
            with self.loader.task():
                delta = fastpath.delta(self, rows) if self.incremental and not boot else None
                if delta is None:
                    report = await self._update_all(rows, boot)
                else:
                    report = await self._update_some(rows, delta)
                self.rows = rows
                self.last_report = report
                return report

    async def _update_all(self, rows: Any, boot: bool) -> UpdateReport:
        plans = flatten(rows, self.store, getattr(rows, "loc", None))
        self._prepare(plans)
        report = await Transaction(self, plans, boot=boot).run()
        self.recheck = fastpath.recheck_roots(self)
        return report

    async def _update_some(self, rows: list, delta: "fastpath.Delta") -> UpdateReport:
        """Only plain top-level rows were edited, added or removed: reconcile just those."""
        plans = fastpath.plans_for(rows, delta.plan)
        self._prepare(plans)
        report = await Transaction(self, plans, boot=False, removed=delta.removed).run()
        if delta.ids is not None:
            fastpath.relink(self, delta.ids)
        fastpath.adopt(self, rows)
        self.recheck.difference_update(entry.id for entry in delta.removed)
        for position in delta.plan:
            entry = self.roots[position]
            self.recheck.discard(entry.id)
            if fastpath.needs_recheck(entry):
                self.recheck.add(entry.id)
        acted = {outcome.full_id for outcome in report.rows}
        report.unchanged = [full_id for full_id in self._full_ids if full_id not in acted]
        return report

    def _prepare(self, plans: list[RowPlan]) -> None:
        """Import plugins and evaluate ``disabled`` for every row, before anything changes."""
        failures: list[LoaderError] = []
        for plan in plans:
            parent = plan.parent
            inherited = parent.hides_children if parent is not None else False
            full_id = self.prefix + plan.id
            if not inherited:  # an unmounted ancestor decides; the row's own flag is not read
                try:
                    plan.own_disabled = evaluate_disabled(
                        plan.row, home=self.loader.home, get_service=self.owner_ctx.get,
                        full_id=full_id)
                except DshctlError as err:  # §12.5: the update fails before anything changes
                    raise LoaderError(err.message, loc=err.loc, hint=err.hint) from None
            plan.hides_children = inherited or plan.own_disabled
            keeps_fiber = plan.is_group and js_truthy(plan.row.get("group"))
            plan.disabled = inherited or (plan.own_disabled and not keeps_fiber)
            try:
                self._check_inject(plan, full_id)
                if plan.disabled:  # not mounted, so not imported (a Node plugin turned off is fine)
                    old = self.store.get(plan.id)
                    same = old is not None and old.options.get("name") == plan.row["name"]
                    plan.plugin = old.plugin if same else None
                    plan.active = False
                    continue
                plan.plugin = self._plugin_for(plan, full_id)
            except PluginUnavailable as err:
                if not self.loader.skip_unavailable:
                    failures.append(err)
                plan.skipped = err.message
            except LoaderError as err:
                failures.append(err)
            plan.active = not plan.disabled and plan.skipped is None
        if failures:
            raise _combined(failures)

    def _check_inject(self, plan: RowPlan, full_id: str) -> None:
        try:
            normalize_inject(plan.row.get("inject"))
        except CordisError as err:
            raise LoaderError(f"loader entry {full_id} ({plan.row['name']}): {err.message}",
                              loc=_loc_of(plan.row, "inject"),
                              hint="inject is a list of service names or a map name -> config") from None

    def _plugin_for(self, plan: RowPlan, full_id: str) -> Any:
        old = self.store.get(plan.id)
        name = plan.row["name"]
        if old is not None and old.plugin is not None and old.options.get("name") == name:
            return old.plugin  # unchanged name: never re-imported (the module may be hot-swapped)
        try:
            return self.loader.resolve_plugin(self, plan.row, full_id)
        except LoaderError:
            raise
        except Exception as err:  # noqa: BLE001 - an import failure of the plugin's own code
            raise LoaderError(f"failed to import loader entry {full_id} ({name}): {cause_text(err)}",
                              loc=_loc_of(plan.row, "name"),
                              hint="the module raised while importing; the running tree is unchanged"
                              ) from err

    # ---- the programmatic API (§6.4); each edit is a transactional update and writes back -----
    async def create(self, options: dict, parent_id: str | None = None,
                     position: int | None = None) -> UpdateReport:
        from . import edit
        return await edit.create(self, options, parent_id, position)

    async def remove(self, entry_id: str) -> UpdateReport:
        from . import edit
        return await edit.remove(self, entry_id)

    async def update_entry(self, entry_id: str, options: dict | None = None, *, parent_id: Any = ...,
                           position: int | None = None) -> UpdateReport:
        from . import edit
        return await edit.update(self, entry_id, options, parent_id=parent_id, position=position)

    # ---- committing ------------------------------------------------------------------------------
    def commit(self, plans: list[RowPlan], by_plan: dict[int, Entry]) -> None:
        order = [by_plan[id(plan)] for plan in plans]
        for entry in order:
            entry.children = []
        roots = []
        for entry in order:
            (entry.parent.children if entry.parent is not None else roots).append(entry)
        self.set_layout(roots, order)

    def set_layout(self, roots: list[Entry], order: list[Entry]) -> None:
        self.roots, self._order = roots, order
        self.root_ids = list(map(_ID, roots))
        self.root_pos = dict(zip(self.root_ids, range(len(roots))))
        local_ids = self.root_ids if order is roots or len(order) == len(roots) else list(map(_ID, order))
        self._full_ids = [self.prefix + i for i in local_ids] if self.prefix else list(local_ids)

    def forget(self, entry: Entry) -> None:
        if self.store.get(entry.id) is entry:
            del self.store[entry.id]

    def detach(self) -> None:
        """The owner fiber went away: its fibers went with it (they were its effects)."""
        for entry in self._order:
            if entry.fiber is not None:
                self.loader.fibers.pop(entry.fiber, None)
                entry.fiber = None
            if entry.subtree is not None:
                entry.subtree.detach()

    def schedule_write(self) -> None:
        if self.source is not None:
            self.source.schedule_write()


_ID = operator.attrgetter("id")


def _loc_of(row: Any, key: str):
    return row.loc_of(key) if hasattr(row, "loc_of") else None


def _combined(failures: list[LoaderError]) -> LoaderError:
    if len(failures) == 1:
        return failures[0]
    first, *rest = failures  # the first one's location leads the line (the CLI prints it)
    message = "loader entries failed to apply: " + "; ".join(
        [first.message] + [f"{f.loc}: {f.message}" if f.loc else f.message for f in rest])
    return LoaderUpdateError(message, loc=failures[0].loc, hint=failures[0].hint, causes=failures)
