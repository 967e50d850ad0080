"""Fibers: one running instance of a plugin, with the Cordis state machine.

Transitions (cordis-runtime.md §1): a new epoch is recorded at once; if no transition is running it
starts a *reload* (INACTIVE -> valid) or an *unload* (anything else). A running transition re-checks the
epoch when it ends ("inertia"), so it always finishes before the fiber reacts to a newer epoch. One
asyncio task (``_task``) drives the whole chain of reload/unload steps.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Hashable

from ._aio import DONE, spawn, tick
from .effects import ANONYMOUS, EffectHandle
from .errors import RuntimeTimeout, inactive_effect, logger
from .schema import validate_config
from .states import INACTIVE, State

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context
    from .plugin import PluginSpec
    from .registry import PluginRuntime, Registry
    from .services import Binding


class Fiber:
    """A plugin instance. Await it to wait until it settles (raises its recorded error)."""

    def __init__(self, registry: "Registry", parent: "Fiber | None", parent_ctx: "Context | None",
                 runtime: "PluginRuntime | None", config: Any):
        self.registry = registry
        self.uid: int | None = registry._next_uid()
        self.parent = parent
        self.runtime = runtime
        self.spec: "PluginSpec | None" = runtime.spec if runtime else None
        self.config = config                  # the raw config as given (write-back keeps this)
        self.resolved_config: Any = None      # what apply received
        self.inject: dict[str, Any] = dict(self.spec.inject) if self.spec else {}
        self.state = State.PENDING
        self.epoch: Any = INACTIVE
        self._generation = 0
        self.error: BaseException | None = None
        self._effects: dict[EffectHandle, None] = {}
        self._task: asyncio.Task | None = None
        self._handle: EffectHandle | None = None           # the parent's ``ctx.plugin()`` effect
        self._provided: dict[tuple[str, Hashable], "Binding"] = {}
        self._provided_view: dict[str, "Binding"] = {}   # own services, readable until dependents settle
        self._injected_view: dict[str, "Binding"] = {}   # snapshot taken when a reload starts
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
        return [h.tree() for h in self._effects if h.label != _APPLY or h._disposers]

    # ---- state ---------------------------------------------------------------------------------
    def _set_state(self, state: State) -> None:
        old = self.state
        if old is state:
            return
        self.state = state
        events = self.registry.events
        if events.has_listeners("internal/status"):
            events.emit("internal/status", (self, old))
        if self._provided and (old is State.ACTIVE or state is State.ACTIVE):
            self.registry.services.notify_provided(self)

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
        if self._task is not None:
            return  # inertia: the running transition re-checks the epoch when it ends
        if old is INACTIVE:
            self._begin(State.LOADING, self._reload)
        else:
            self._begin(State.UNLOADING, self._unload)

    def _begin(self, state: State, step) -> None:
        self._set_state(state)
        self._task = spawn(self._drive(step))

    async def _drive(self, step) -> None:
        try:
            while step is not None:
                step = await step()
        finally:
            self._task = None
            self._set_state(self._resting_state())

    # ---- reload --------------------------------------------------------------------------------
    async def _reload(self):
        e0 = self.epoch
        self._commit_bindings()
        await tick()
        if self.epoch == e0:
            self.error = None
            try:
                self.resolved_config = self.resolve_config(self.config)
                await self._apply(self.resolved_config)
            except Exception as err:  # noqa: BLE001 - any failure makes the fiber FAILED
                logger.error("plugin %s failed to apply", self.name, exc_info=err)
                self.error = err
                self.epoch = INACTIVE
        if self.epoch == e0:
            return None
        self._set_state(State.UNLOADING)
        return self._unload

    def _commit_bindings(self) -> None:
        services = self.registry.services
        self._injected_view = {}
        for name in self.inject:
            binding = services.lookup(name, self.ctx._realm(name))
            if binding is not None:
                self._injected_view[name] = binding

    def resolve_config(self, config: Any) -> Any:
        """Run the ``internal/config`` pipeline, then validate against the plugin's schema."""
        events = self.registry.events
        for listener in events._targets("internal/config", None):
            result = events._invoke(listener, (self, config))
            if result is not None:
                config = result
        return validate_config(self.spec.schema if self.spec else None, config)

    async def _apply(self, config: Any) -> None:
        spec = self.spec
        handle = EffectHandle(self, lambda: spec.apply(self.ctx, config), _APPLY, log_async_errors=False)
        if handle.pending:
            limit = self.registry.options.apply_timeout
            done, _ = await asyncio.wait({handle._setup}, timeout=limit)
            if not done:
                handle._setup.cancel()
                await asyncio.wait({handle._setup})
                raise RuntimeTimeout(f"plugin {self.name} did not finish apply within {limit}s")
        if handle._error is not None:
            raise handle._error

    # ---- unload --------------------------------------------------------------------------------
    async def _unload(self):
        handles = list(self._effects)
        await tick()
        pending = []
        for handle in reversed(handles):  # newest first; sync disposers therefore finish LIFO
            result = handle()
            if result is not DONE and not result.done():
                pending.append(result)
        if pending:
            await self._await_disposers(pending)
        self._injected_view = {}
        if self.epoch is INACTIVE:
            return None
        self._set_state(State.LOADING)
        return self._reload

    async def _await_disposers(self, pending: list) -> None:
        limit = self.registry.options.dispose_timeout
        _, hung = await asyncio.wait(pending, timeout=limit)
        if hung:
            for future in hung:
                future.cancel()
            err = RuntimeTimeout(f"plugin {self.name}: {len(hung)} disposer(s) did not finish within {limit}s")
            logger.error("%s", err)
            self.error = err
            self.epoch = INACTIVE

    # ---- operations ----------------------------------------------------------------------------
    async def wait(self, raise_error: bool = True) -> "Fiber":
        """Wait while a transition runs; then raise the recorded error (unless told not to)."""
        current = asyncio.current_task()
        while self._task is not None and self._task is not current:
            await asyncio.wait({self._task})
        if raise_error and self.error is not None:
            raise self.error
        return self

    def __await__(self):
        return self.wait().__await__()

    def _settled(self, raise_error: bool):
        """An awaitable for ``wait`` that is safe to drop unawaited (no 'never retrieved' warnings)."""
        if self._task is None and (not raise_error or self.error is None):
            return DONE
        task = spawn(self.wait() if raise_error else self._wait_quietly())
        task.add_done_callback(_retrieve)
        return task

    async def _wait_quietly(self) -> None:
        await self.wait(raise_error=False)

    def restart(self):
        if self.uid is None:
            raise inactive_effect()
        self._generation += 1
        self._set_epoch(INACTIVE)
        self._refresh_epoch()
        return self._settled(raise_error=True)

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

        own = self.ctx.fiber
        chain = self.registry.events.waterfall(
            "internal/update", (self, resolved, no_save), default=restart_with_new_config,
            scope=lambda ctx: ctx.fiber is own)
        task = spawn(chain)
        task.add_done_callback(_retrieve)
        return task

    def dispose(self):
        """Dispose the fiber (idempotent). Returns an awaitable that settles when it is unloaded."""
        if self.uid is None:
            return self._settled(raise_error=False)
        if self.parent is None:
            return self._restart_root()
        self.uid = None
        registry = self.registry
        if registry.events.has_listeners("internal/plugin"):
            registry.events.emit("internal/plugin", (self,))
        if self.runtime is not None:
            self.runtime._remove(self)
        registry.services.untrack(self)
        if self._handle is not None:
            self._handle._disarm()
        self._set_epoch(INACTIVE)
        if self._task is None:
            if self._effects:  # effects registered while PENDING or FAILED (D)
                self._begin(State.UNLOADING, self._unload)
            else:
                self._set_state(State.DISPOSED)
        return self._settled(raise_error=False)

    def _restart_root(self):
        """Disposing the root fiber unloads all its effects; the root itself stays ACTIVE."""
        if self._task is None and self._effects:
            async def unload_all():
                await self._unload_root()
            self._task = spawn(self._drive_root(unload_all))
        return self._settled(raise_error=False)

    async def _drive_root(self, body) -> None:
        try:
            await body()
        finally:
            self._task = None

    async def _unload_root(self) -> None:
        handles = list(self._effects)
        await tick()
        pending = [r for r in (h() for h in reversed(handles)) if r is not DONE and not r.done()]
        if pending:
            await asyncio.wait(pending)


_APPLY = "apply"


def _retrieve(task: asyncio.Task) -> None:
    # The fiber reports its own failure; a caller that drops the awaitable must not get a warning.
    if not task.cancelled():
        task.exception()
