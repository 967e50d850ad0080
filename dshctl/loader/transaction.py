"""One transactional tree update (cordis-runtime.md §6.2-§6.3).

Each row is classified synchronously (rows equal to what runs take a fast path that records only
their previous options object). Phase 1 runs every stop concurrently (disable, the old fiber of a
replaced row); phase 2 then runs every start, restart and config update concurrently. Each change
records its undo: ``fields`` (options, structure, realms, intercepts), ``removals`` (fibers this
update started) and ``restores`` (old fibers and configs). A rollback restores the fields, removes
the new fibers newest first, then brings back every changed row with its previous options.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from dshctl.errors import DshctlError
from dshctl.runtime import State

from .entry import REPLACE_KEYS, Entry, changed_keys
from .errors import LoaderUpdateError, cause_text
from .plan import RowPlan
from .report import RowOutcome, UpdateReport

if TYPE_CHECKING:  # pragma: no cover
    from .tree import Tree


@dataclass
class Step:
    """What phase 2 does for one row, after every stop of phase 1 finished."""

    entry: Entry
    run: Callable[..., Awaitable[None]]
    arg: Any = None

    def __call__(self) -> Awaitable[None]:
        return self.run(self.entry) if self.arg is None else self.run(self.entry, self.arg)


class Transaction:
    def __init__(self, tree: "Tree", plans: list[RowPlan], *, boot: bool,
                 removed: list[Entry] | None = None):
        self.tree = tree
        self.plans = plans
        self.boot = boot
        # given: the plans cover only the changed top-level rows (fastpath.py), these rows go, and
        # the tree relinks its layout itself; None: the plans are the whole new list
        self.removed = removed
        self.fields: list[Callable[[], None]] = []
        self.removals: list[Callable[[], Awaitable[None]]] = []
        self.restores: list[Callable[[], Awaitable[None]]] = []
        self.touched: dict[Entry, None] = {}
        self.failures: dict[Entry, BaseException] = {}
        self.actions: dict[Entry, str] = {}
        self.by_plan: dict[int, Entry] = {}
        self.swapped: list[tuple[Entry, dict]] = []   # fast-path rows: (entry, previous options)
        self.unchanged: list[Entry] = []
        self.realms_changed: set[Entry] = set()
        self.failed_before: set[Entry] = set()   # FAILED already: not a rollback failure if still

    # ---- the update ------------------------------------------------------------------------------
    async def run(self) -> UpdateReport:
        tree = self.tree
        if self.removed is not None:
            removed = self.removed
        else:
            kept = {plan.id for plan in self.plans}
            removed = [e for e in tree.order() if e.id not in kept]
        # Phase 1 stops what must stop (disable, replace) concurrently; phase 2 starts what must
        # start only then, so a service moving between rows is never registered twice (§12.4).
        stops: list[Step] = []
        starts: list[Step] = []
        for plan in self.plans:   # synchronous: no task per unchanged row
            stop, start = self._classify(plan)
            if stop is not None:
                stops.append(stop)
            if start is not None:
                starts.append(start)
        failed_stops = await self._all(stops)
        await self._all([s for s in starts if s.entry not in failed_stops])
        await settle([e.fiber for e in self.touched if e.fiber is not None])
        if tree.owner_gone():
            return self._report()  # teardown wins (§6.3 step 3)
        self._collect_fiber_errors()
        if self.failures and not self.boot:
            await self._rollback()
        for entry in reversed(removed):   # children before their groups
            await tree.loader.dispose_entry(entry)
            self.actions[entry] = "stopped"
            tree.forget(entry)
        if self.removed is None:
            tree.commit(self.plans, self.by_plan)
        report = self._report()
        self._forget_undo()
        return report

    def _forget_undo(self) -> None:
        # the undo closures form cycles with this transaction; drop them so nothing waits for
        # the cyclic garbage collector (that made big trees slower with every update)
        self.fields.clear()
        self.swapped.clear()
        self.removals.clear()
        self.restores.clear()

    async def _all(self, steps: list["Step"]) -> set[Entry]:
        """Run the steps concurrently; a step that raises fails its row. Returns those rows."""
        if not steps:
            return set()
        tasks = [asyncio.ensure_future(step()) for step in steps]
        await asyncio.wait(tasks)
        failed = set()
        for task, step in zip(tasks, steps):
            if task.exception() is not None:
                self._fail(step.entry, task.exception())
                failed.add(step.entry)
        return failed

    def _classify(self, plan: RowPlan) -> tuple["Step | None", "Step | None"]:
        """Record the row's new fields; what to stop in phase 1 and what to start in phase 2."""
        tree = self.tree
        entry = tree.store.get(plan.id)
        if entry is not None and self._untouched(entry, plan):
            return None, None
        if entry is None:
            entry = Entry(tree, plan.id, plan.row)
            tree.store[plan.id] = entry
            self.fields.append(lambda: tree.store.pop(plan.id, None))
        self.by_plan[id(plan)] = entry
        old_options, was_active = entry.options, entry.fiber is not None
        if was_active and entry.fiber.state is State.FAILED:
            self.failed_before.add(entry)
        self._set_fields(entry, plan)
        realms_changed = entry.refresh_realms()
        if realms_changed:
            self.realms_changed.add(entry)
        entry.refresh_intercepts()
        if not was_active and not plan.active:
            self.actions[entry] = "skipped" if plan.skipped else ("disabled" if entry.disabled else "unchanged")
            return None, None
        if was_active and not plan.active:
            return Step(entry, self._stop, "skipped" if plan.skipped else "stopped"), None
        if not was_active:
            return None, Step(entry, self._start)
        keys = changed_keys(old_options, entry.options, group=entry.is_group) \
            if old_options is not entry.options else set()
        if any(k in keys for k in REPLACE_KEYS) or entry.plugin is not entry.fiber.plugin:
            # name, inject or group: the new plugin was imported already; the old fiber is
            # disposed (awaited) before the new one starts, and comes back on rollback
            return Step(entry, self._stop, "restarted"), Step(entry, self._start)
        if realms_changed and realms_changed & entry.relevant_services():
            return None, Step(entry, self._restart)
        if "config" in keys:
            return None, Step(entry, self._update_config)
        if keys:
            self.actions[entry] = "updated"
        else:
            self.unchanged.append(entry)
        return None, None

    def _untouched(self, entry: Entry, plan: RowPlan) -> bool:
        """The fast path for the common case, a row equal to what runs: only the options object
        is swapped (undone from one list), nothing else is recorded."""
        parent = self.by_plan[id(plan.parent)] if plan.parent is not None else None
        if (entry.parent is not parent or entry.plugin is not plan.plugin or entry.disabled != plan.disabled
                or entry.skipped != plan.skipped or (entry.fiber is not None) != plan.active
                or (parent is not None and parent in self.realms_changed)
                or entry.options != plan.row):
            return False
        self.by_plan[id(plan)] = entry
        self.swapped.append((entry, entry.options))
        entry.options = plan.row
        self.unchanged.append(entry)
        return True

    def _set_fields(self, entry: Entry, plan: RowPlan) -> None:
        saved = (entry.options, entry.parent, entry.plugin, entry.skipped, entry.is_group,
                 entry.disabled, dict(entry.realms), dict(entry.intercepts))

        def restore() -> None:
            (entry.options, entry.parent, entry.plugin, entry.skipped, entry.is_group,
             entry.disabled, realms, intercepts) = saved
            entry.realms.clear()
            entry.realms.update(realms)
            entry.intercepts.clear()
            entry.intercepts.update(intercepts)
        self.fields.append(restore)
        entry.options = plan.row
        entry.parent = self.by_plan[id(plan.parent)] if plan.parent is not None else None
        entry.plugin = plan.plugin
        entry.skipped = plan.skipped
        entry.is_group = plan.is_group
        entry.disabled = plan.disabled

    # ---- fiber changes ------------------------------------------------------------------------------
    # Undo is split in two lists: ``removals`` (fibers this update started) run first, newest
    # first; ``restores`` (old fibers and configs) run after them, with every field restored.
    async def _start(self, entry: Entry) -> None:
        loader = self.tree.loader
        loader.plug(entry)
        self.touched[entry] = None
        self.actions.setdefault(entry, "started")
        self.removals.append(lambda: loader.dispose_entry(entry))

    async def _stop(self, entry: Entry, action: str) -> None:
        loader = self.tree.loader
        await loader.dispose_entry(entry)
        self.actions[entry] = action

        async def start_old() -> None:
            loader.plug(entry)
            self.touched[entry] = None
        self.restores.append(start_old)

    async def _restart(self, entry: Entry) -> None:
        """A realm the fiber uses changed: restart it (with its new config, if that changed too)."""
        loader = self.tree.loader
        fiber = entry.fiber
        self.touched[entry] = None
        self.actions[entry] = "restarted"
        old_config = fiber.config

        async def restart_again() -> None:  # realms are restored by then
            if fiber.uid is not None:
                fiber.config = old_config
                await _quietly(fiber.restart())
        self.restores.append(restart_again)
        fiber.config = loader.config_for(entry)
        await _quietly(fiber.restart())

    async def _update_config(self, entry: Entry) -> None:
        loader = self.tree.loader
        fiber = entry.fiber
        generation = fiber._generation
        self.touched[entry] = None

        async def back_to_old_config() -> None:
            if entry.fiber is fiber and fiber.uid is not None:
                await _quietly(fiber.update(loader.config_for(entry), no_save=True))
        self.restores.append(back_to_old_config)
        try:
            await fiber.update(loader.config_for(entry), no_save=True)
        finally:
            self.actions[entry] = "restarted" if fiber._generation != generation else "updated"

    # ---- failure and rollback -------------------------------------------------------------------
    def _fail(self, entry: Entry, err: BaseException) -> None:
        self.failures.setdefault(entry, err)

    def _collect_fiber_errors(self) -> None:
        for entry in self.touched:
            fiber = entry.fiber
            if fiber is not None and fiber.state is State.FAILED and fiber.error is not None:
                self._fail(entry, fiber.error)

    async def _rollback(self) -> None:
        single = len(self.failures) == 1   # one failure: its location leads the line instead
        lines = [failure_line(e, err, located=not single) for e, err in self.failures.items()]
        first, first_err = next(iter(self.failures.items()))
        first_loc = getattr(first_err, "loc", None) or first.loc
        report = self._report(rolled_back=True)
        for entry, options in self.swapped:
            entry.options = options
        for undo in reversed(self.fields):
            undo()
        broken: list[tuple[Entry | None, BaseException]] = []
        for undo in [*reversed(self.removals), *reversed(self.restores)]:
            try:
                await undo()
            except Exception as err:  # noqa: BLE001 - reported as a failed rollback below
                broken.append((None, err))
        restored = [e for e in self.touched if e.fiber is not None]
        await settle([e.fiber for e in restored])
        broken += [(e, e.fiber.error) for e in restored if e not in self.failed_before
                   and e.fiber.state is State.FAILED and e.fiber.error is not None]
        self._forget_undo()
        raise self._error(report, broken, lines, first_loc)

    def _error(self, report: UpdateReport, broken: list, lines: list[str], loc) -> LoaderUpdateError:
        if len(lines) == 1:
            message = lines[0]
        else:
            message = f"loader entries failed to apply: {'; '.join(lines)}"
        if broken:
            extra = "; ".join(cause_text(err) if e is None else failure_line(e, err) for e, err in broken)
            message = f"loader entry rollback failed: {message}; restoring the previous tree failed: {extra}"
        report.error = message
        return LoaderUpdateError(
            message, loc=loc, report=report, causes=list(self.failures.values()),
            rollback_failed=bool(broken),
            hint=("the previous tree could not be fully restored; check the rows named above"
                  if broken else "the previous tree was restored and keeps running"))

    def _report(self, *, rolled_back: bool = False) -> UpdateReport:
        report = UpdateReport(unchanged=[e.full_id for e in self.unchanged])
        planned = [self.by_plan[id(p)] for p in self.plans if id(p) in self.by_plan]
        ordered = [e for e in planned if e in self.actions]
        listed = set(ordered)
        ordered += [e for e in self.actions if e not in listed]
        for entry in ordered:
            action = self.actions[entry]
            reason = None
            if entry in self.failures:
                action, reason = "failed", cause_text(self.failures[entry])
            elif rolled_back and action not in ("unchanged", "disabled", "skipped"):
                action = "rolled-back"
            elif action == "skipped":
                reason = entry.skipped
            report.add(RowOutcome(entry.full_id, entry.name, action, reason, entry.loc))
            sub = entry.subtree.last_report if entry.subtree is not None else None
            if sub is not None and action not in ("unchanged",):
                report.rows.extend(sub.rows)
        return report


def failure_line(entry: Entry, err: BaseException, *, located: bool = True) -> str:
    """``failed to apply loader entry <id> (<name>) at <loc>: <cause>`` (the cause's own location
    when it has one: that is where the user has to look)."""
    loc = getattr(err, "loc", None) or entry.loc
    cause = err.message if isinstance(err, DshctlError) else cause_text(err)
    where = f" at {loc}" if located and loc is not None else ""
    return f"failed to apply loader entry {entry.full_id} ({entry.name}){where}: {cause}"


async def settle(fibers: list) -> None:
    """Wait until none of ``fibers`` is in a transition (one tick more lets notifications land)."""
    moving = (State.LOADING, State.UNLOADING)
    while True:
        await asyncio.gather(*(f.wait(raise_error=False) for f in fibers if f.state in moving))
        await asyncio.sleep(0)
        if not any(f.state in moving for f in fibers):
            return


async def _quietly(awaitable: Any) -> None:
    try:
        await awaitable
    except Exception:  # noqa: BLE001 - the caller checks the fiber's state
        pass
