"""Fibers: one running instance of a plugin, with the Cordis state machine.

Transitions (cordis-runtime.md §1): a new epoch is recorded at once; if no transition is running it
starts a *reload* (INACTIVE -> valid) or an *unload* (anything else). A running transition re-checks the
epoch when it ends ("inertia"), so it always finishes before the fiber reacts to a newer epoch.

The steps run one tick later from the registry's queue of due fibers (one loop callback per tick for
all of them, see ``Registry.schedule``), not one task per fiber: a task is spawned only while an async
``apply`` or async disposers are awaited. A queued step is a field on the fiber, so scheduling allocates
nothing the cyclic GC would have to scan; this keeps mounting thousands of fibers cheap and linear
(see docs/performance.md).
"""
from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any, Callable, Hashable

from ._aio import is_settled, spawn
from .effects import ANONYMOUS, EffectHandle
from .errors import RuntimeTimeout, inactive_effect, logger
from .schema import validate_config
from .states import INACTIVE, State

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context
    from .plugin import PluginSpec
    from .registry import PluginRuntime, Registry
    from .services import Binding

_APPLY = "apply"


class Fiber:
    """A plugin instance. Await it to wait until it settles (raises its recorded error)."""

    def __init__(self, registry: "Registry", parent: "Fiber | None", parent_ctx: "Context | None",
                 runtime: "PluginRuntime | None", config: Any):
        self.registry = registry
        self.uid: int | None = registry._next_uid()
        self.parent = parent
        self.parent_ctx = parent_ctx          # the context it was plugged from (realms, intercepts)
        self.runtime = runtime
        self.spec: "PluginSpec | None" = runtime.spec if runtime else None
        self.config = config                  # the raw config as given (write-back keeps this)
        self.resolved_config: Any = None      # what apply received
        self.inject: dict[str, Any] = dict(self.spec.inject) if self.spec else {}
        self.state = State.PENDING
        self.epoch: Any = INACTIVE
        self.error: BaseException | None = None
        self._generation = 0
        self._effects: dict[EffectHandle, None] = {}
        self._busy = False                                # a transition is running
        self._reload_epoch: Any = None                    # e0 of the running reload
        self._next_step: Callable[["Fiber"], None] | None = None  # the step the registry runs on the next tick
        self._unload_handles: Any = ()                    # the disposables an unload snapshotted
        self._unload_root = False                         # a root unload: rest without reloading
        self._settle: asyncio.Future | None = None        # created on demand by waiters
        self._apply_task: asyncio.Task | None = None      # an async apply being awaited
        self._handle: EffectHandle | None = None          # the parent's ``ctx.plugin()`` effect
        self._provided: dict[tuple[str, Hashable], "Binding"] = {}
        self._provided_view: dict[str, "Binding"] = {}    # own services, readable until dependents settle
        self._injected_view: dict[str, "Binding"] = {}    # snapshot taken when a reload starts
        from .context import Context  # local: context imports fiber
        self.ctx: "Context" = Context._for_fiber(self, parent_ctx)

    # ---- identity ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.spec.name if self.spec else "root"

    @property
    def plugin(self) -> Any:
        return self.spec.plugin if self.spec else None

    def __repr__(self) -> str:
        return f"<Fiber {self.name} uid={self.uid} {self.state.name}>"

    # ---- effects -------------------------------------------------------------------------------
    def ensure_active(self) -> None:
        if self.uid is None or self.state is State.UNLOADING:
            raise inactive_effect()

    def effect(self, execute: Callable[[], Any], label: str = ANONYMOUS) -> EffectHandle:
        self.ensure_active()
        return EffectHandle(self, execute, label)

    def get_effects(self) -> list[dict]:
        return [h.tree() for h in self._effects]

    # ---- state and epoch -----------------------------------------------------------------------
    def _set_state(self, state: State) -> None:
        old = self.state
        if old is state:
            return
        self.state = state
        self._emit_safely("internal/status", (self, old))
        if self._provided and (old is State.ACTIVE or state is State.ACTIVE):
            self.registry.services.notify_provided(self)

    def _emit_safely(self, name: str, args: tuple) -> None:
        events = self.registry.events
        if events.has_listeners(name):
            try:
                events.emit(name, args)
            except Exception as err:  # noqa: BLE001 - an observer must not break a transition
                logger.error("%s listener failed", name, exc_info=err)

    def _resting_state(self) -> State:
        if self.uid is None:
            return State.DISPOSED
        if self.error is not None:
            return State.FAILED
        if self.epoch is not INACTIVE:
            return State.ACTIVE
        return State.PENDING

    def _refresh_epoch(self) -> None:
        if self.uid is not None:
            epoch = self.registry.services.epoch_of(self)
            # The restart generation makes restart()/update() during a running transition count as a
            # change instead of being absorbed by inertia.
            self._set_epoch(epoch if epoch is INACTIVE else (self._generation, *epoch))

    def _set_epoch(self, epoch: Any) -> None:
        if epoch == self.epoch:
            return
        old, self.epoch = self.epoch, epoch
        if self._busy:
            return  # inertia: the running transition re-checks the epoch when it ends
        self._busy = True
        if old is INACTIVE:
            self._start_reload()
        else:
            self._start_unload()

    def _finish(self) -> None:
        self._busy = False
        self._set_state(self._resting_state())
        settle = self._settle
        if settle is not None and not self._busy:
            self._settle = None
            if not settle.done():
                settle.set_result(None)

    # ---- reload --------------------------------------------------------------------------------
    def _start_reload(self) -> None:
        self._set_state(State.LOADING)
        self._reload_epoch = self.epoch
        self._commit_bindings()
        self.registry.schedule(self, Fiber._reload_step)

    def _commit_bindings(self) -> None:
        services = self.registry.services
        self._injected_view = {}
        for name in self.inject:
            binding = services.lookup(name, self.ctx._realm(name))
            if binding is not None:
                self._injected_view[name] = binding

    def _reload_step(self) -> None:
        if self.epoch == self._reload_epoch:
            self.error = None
            try:
                self.resolved_config = self.resolve_config(self.config)
                handle = EffectHandle(self, functools.partial(self.spec.apply, self.ctx, self.resolved_config),
                                      _APPLY, log_async_errors=False)
            except Exception as err:  # noqa: BLE001 - any failure makes the fiber FAILED
                self._apply_failed(err)
            else:
                if handle.pending:
                    self._apply_task = spawn(self._await_apply(handle))
                    return
                self._apply_settled(handle)
        self._after_reload()

    async def _await_apply(self, handle: EffectHandle) -> None:
        limit = self.registry.options.apply_timeout
        done, _ = await asyncio.wait({handle._setup}, timeout=limit)
        if done:
            self._apply_settled(handle)
        else:
            handle._setup.cancel()
            await asyncio.wait({handle._setup})
            self._apply_failed(RuntimeTimeout(f"plugin {self.name} did not finish apply within {limit}s"))
        self._apply_task = None
        self._after_reload()

    def _apply_settled(self, handle: EffectHandle) -> None:
        if handle._error is not None:
            self._apply_failed(handle._error)
        elif not handle._disposers:
            handle._disarm()  # apply returned nothing to undo: keep the effect list lean

    def _apply_failed(self, err: BaseException) -> None:
        logger.error("plugin %s failed to apply", self.name, exc_info=err)
        self.error = err
        self.epoch = INACTIVE

    def _after_reload(self) -> None:
        if self.epoch == self._reload_epoch:
            self._finish()
        else:
            self._start_unload()

    def resolve_config(self, config: Any) -> Any:
        """Run the ``internal/config`` pipeline, then validate against the plugin's schema."""
        events = self.registry.events
        for listener in events._targets("internal/config", None):
            result = events._invoke(listener, (self, config))
            if result is not None:
                config = result
        return validate_config(self.spec.schema if self.spec else None, config)

    # ---- unload --------------------------------------------------------------------------------
    def _start_unload(self, root: bool = False) -> None:
        self._unload_root = root
        self._unload_handles = list(self._effects) if self._effects else ()
        # Cordis starts the unload before it marks the fiber UNLOADING (which wakes the dependents),
        # so a provider's own disposers run before those of the dependents it takes down with it.
        self.registry.schedule(self, Fiber._unload_step)
        if not root:
            self._set_state(State.UNLOADING)

    def _unload_step(self) -> None:
        handles, self._unload_handles = self._unload_handles, ()
        pending = []
        for handle in reversed(handles):  # newest first; sync disposers therefore finish LIFO
            result = handle()
            if not is_settled(result):
                pending.append(result)
        if pending:
            spawn(self._await_disposers(pending))
        else:
            self._unload_done()

    async def _await_disposers(self, pending: list) -> None:
        limit = self.registry.options.dispose_timeout
        _, hung = await asyncio.wait(pending, timeout=limit)
        if hung and self.parent is not None:
            for future in hung:
                future.cancel()
            err = RuntimeTimeout(f"plugin {self.name}: {len(hung)} disposer(s) did not finish within {limit}s")
            logger.error("%s", err)
            self.error = err
            self.epoch = INACTIVE
        self._unload_done()

    def _unload_done(self) -> None:
        if self._unload_root:
            self._finish()
        else:
            self._after_unload()

    def _after_unload(self) -> None:
        self._injected_view = {}
        if self.epoch is INACTIVE:
            self._finish()
        else:
            self._start_reload()

    # ---- operations ----------------------------------------------------------------------------
    async def wait(self, raise_error: bool = True) -> "Fiber":
        """Wait while a transition runs; then raise the recorded error (unless told not to)."""
        while self._busy:
            if self._apply_task is not None and asyncio.current_task() is self._apply_task:
                break  # awaited from inside its own apply: waiting would deadlock
            if self._settle is None:
                self._settle = asyncio.get_running_loop().create_future()
            await asyncio.wait({self._settle})
        if raise_error and self.error is not None:
            raise self.error
        return self

    def __await__(self):
        return self.wait().__await__()

    def restart(self):
        """Unload and apply again; returns an awaitable that raises if the reload fails."""
        if self.uid is None:
            raise inactive_effect()
        if self.parent is None:
            return self._dispose_root()  # the root has no apply: restarting it unloads its effects
        self._generation += 1
        self._set_epoch(INACTIVE)
        self._refresh_epoch()
        if not self._busy:  # no transition (unmet inject): still re-derive, e.g. FAILED -> PENDING
            self._set_state(self._resting_state())
        return Settling(self, raise_error=True)

    def update(self, config: Any, no_save: bool = False):
        """Store ``config`` and restart; returns an awaitable of the restart.

        On an ACTIVE fiber the config is resolved first (a validation error raises here, synchronously)
        and the ``internal/update`` waterfall runs; a listener that does not call ``next()`` handles the
        change in place.
        """
        if self.uid is None:
            raise inactive_effect()
        if self.state is not State.ACTIVE:
            self.config = config
            self.error = None
            return self.restart()
        resolved = self.resolve_config(config)
        self.config = config

        def restart_with_new_config():
            self.error = None
            return self.restart()

        chain = self.registry.events.waterfall(
            "internal/update", (self, resolved, no_save), default=restart_with_new_config,
            scope=lambda ctx: ctx.fiber is self)
        task = spawn(chain)
        task.add_done_callback(_retrieve)
        return task

    def dispose(self):
        """Dispose the fiber (idempotent). Returns an awaitable that settles when it is unloaded."""
        if self.uid is None:
            return Settling(self, raise_error=False)
        if self.parent is None:
            return self._dispose_root()
        self.uid = None
        registry = self.registry
        self._emit_safely("internal/plugin", (self,))
        if self.runtime is not None:
            self.runtime._remove(self)
        registry.services.untrack(self)
        if self._handle is not None:
            self._handle._disarm()
            self._handle = None  # the parent's handle points back here: leave no cycle for the GC
        self._set_epoch(INACTIVE)
        if not self._busy:
            if self._effects:  # effects registered while PENDING or FAILED (D)
                self._busy = True
                self._start_unload()
            else:
                self._set_state(State.DISPOSED)
        return Settling(self, raise_error=False)

    def _dispose_root(self):
        """Disposing the root fiber unloads all its effects; the root itself stays ACTIVE."""
        if not self._busy and self._effects:
            self._busy = True
            self._start_unload(root=True)
        return Settling(self, raise_error=False)


class Settling:
    """What restart() and dispose() return: await it to wait for the fiber to settle.

    It is lazy (nothing runs if it is dropped) and ``done()`` tells whether the fiber is idle.
    """

    __slots__ = ("fiber", "raise_error")

    def __init__(self, fiber: Fiber, raise_error: bool):
        self.fiber = fiber
        self.raise_error = raise_error

    def done(self) -> bool:
        return not self.fiber._busy

    def __await__(self):
        fiber = yield from self.fiber.wait(self.raise_error).__await__()
        return fiber if self.raise_error else None


def _retrieve(task: asyncio.Task) -> None:
    # The fiber reports its own failure; a caller that drops the awaitable must not get a warning.
    if not task.cancelled():
        task.exception()
