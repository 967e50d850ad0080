"""The registry: uids, one runtime record per plugin, the service table, the event bus, options."""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._aio import DONE
from .errors import logger
from .events import EventBus
from .plugin import PluginSpec, describe_plugin
from .services import ServiceTable
from .states import State

if TYPE_CHECKING:  # pragma: no cover
    from .fiber import Fiber


@dataclass
class RuntimeOptions:
    """Timeouts (seconds; None = wait forever) that keep a hung plugin from wedging the host."""

    apply_timeout: float | None = 30.0
    dispose_timeout: float | None = 30.0
    waterfall_timeout: float | None = 30.0


class PluginRuntime:
    """The record of one plugin callable and its live fibers; dropped with its last fiber."""

    def __init__(self, registry: "Registry", spec: PluginSpec):
        self.registry = registry
        self.spec = spec
        self.fibers: dict["Fiber", None] = {}

    def _remove(self, fiber: "Fiber") -> None:
        self.fibers.pop(fiber, None)
        if not self.fibers and self.registry._runtimes.get(_key(self.spec.plugin)) is self:
            del self.registry._runtimes[_key(self.spec.plugin)]


def _key(plugin: Any) -> Any:
    try:
        hash(plugin)
        return plugin
    except TypeError:
        return id(plugin)


class Registry:
    def __init__(self, options: RuntimeOptions | None = None):
        self.options = options or RuntimeOptions()
        self._uids = itertools.count()
        self._runtimes: dict[Any, PluginRuntime] = {}
        self.services = ServiceTable()
        self.events = EventBus(self.options.waterfall_timeout)
        self._due: list["Fiber"] = []  # fibers whose next transition step runs on the next tick
        from .fiber import Fiber  # local: fiber imports registry types only for typing
        self.root: Fiber = Fiber(self, None, None, None, None)
        self.root.epoch = ()
        self.root.state = State.ACTIVE

    def _next_uid(self) -> int:
        return next(self._uids)

    def schedule(self, fiber: "Fiber", step) -> None:
        """Run ``step(fiber)`` one tick from now (after ``await asyncio.sleep(0)`` in the caller).

        One loop callback drains every fiber due in that tick, in scheduling order: a per-fiber
        ``call_soon`` would queue a Handle, a bound method and a context copy per fiber, which survive
        into the GC's oldest generation when thousands of fibers are plugged at once.
        """
        fiber._next_step = step
        if not self._due:
            asyncio.get_running_loop().call_soon(self._run_due)
        self._due.append(fiber)

    def _run_due(self) -> None:
        due, self._due = self._due, []
        for fiber in due:
            step, fiber._next_step = fiber._next_step, None
            try:
                step(fiber)
            except Exception as err:  # noqa: BLE001 - one broken step must not strand the others
                logger.error("transition step of %r failed", fiber, exc_info=err)

    def runtime_for(self, plugin: Any) -> PluginRuntime:
        key = _key(plugin)
        runtime = self._runtimes.get(key)
        if runtime is None:
            runtime = PluginRuntime(self, describe_plugin(plugin))
            self._runtimes[key] = runtime
        return runtime

    def get(self, plugin: Any) -> PluginRuntime | None:
        return self._runtimes.get(_key(plugin))

    def __contains__(self, plugin: Any) -> bool:
        return _key(plugin) in self._runtimes

    def __len__(self) -> int:
        return len(self._runtimes)

    def delete(self, plugin: Any):
        """Dispose every fiber of ``plugin``; returns an awaitable, or None if it was not registered."""
        runtime = self.get(plugin)
        if runtime is None:
            return None
        waits = [w for w in (fiber.dispose() for fiber in list(runtime.fibers)) if w is not DONE]
        return asyncio.gather(*waits) if waits else DONE
