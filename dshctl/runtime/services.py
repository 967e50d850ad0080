"""Service bindings per realm, dependency epochs, and notification of dependents.

A binding lives under ``(name, realm)``. A fiber's dependency on ``name`` is met when its context's realm
for ``name`` holds a binding whose provider fiber is ACTIVE and whose ``check()`` passes.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable, Hashable

from ._aio import spawn
from .errors import CordisError, logger
from .states import INACTIVE, State

if TYPE_CHECKING:  # pragma: no cover
    from .fiber import Fiber

ROOT_REALM: Hashable = ("root",)


class ServiceAccessError(CordisError, AttributeError):
    """Reading ``ctx.<svc>`` failed (also an AttributeError, so ``hasattr`` stays well-behaved)."""


class Binding:
    __slots__ = ("name", "realm", "value", "fiber", "check")

    def __init__(self, name: str, realm: Hashable, value: Any, fiber: "Fiber", check: Callable[[], Any] | None):
        self.name = name
        self.realm = realm
        self.value = value
        self.fiber = fiber
        self.check = check

    def usable(self) -> bool:
        if self.fiber.state is not State.ACTIVE:
            return False
        if self.check is None:
            return True
        try:
            return bool(self.check())
        except Exception as err:  # noqa: BLE001 - a raising check counts as "not available"
            logger.error('check() of service "%s" failed', self.name, exc_info=err)
            return False


class ServiceTable:
    def __init__(self) -> None:
        self.bindings: dict[tuple[str, Hashable], Binding] = {}
        # name -> fibers injecting it (ordered set); the realm is checked at notification time.
        self.dependents: dict[str, dict["Fiber", None]] = {}

    # ---- dependents ---------------------------------------------------------------------------
    def track(self, fiber: "Fiber") -> None:
        for name in fiber.inject:
            self.dependents.setdefault(name, {})[fiber] = None

    def untrack(self, fiber: "Fiber") -> None:
        for name in fiber.inject:
            group = self.dependents.get(name)
            if group is not None:
                group.pop(fiber, None)
                if not group:
                    del self.dependents[name]

    def lookup(self, name: str, realm: Hashable) -> Binding | None:
        return self.bindings.get((name, realm))

    def epoch_of(self, fiber: "Fiber"):
        """The providers' uids in inject order, or INACTIVE when any inject is unmet."""
        if not fiber.inject:
            return ()
        uids = []
        for name in fiber.inject:
            binding = self.bindings.get((name, fiber.ctx._realm(name)))
            if binding is None or not binding.usable():
                return INACTIVE
            uids.append(binding.fiber.uid)
        return tuple(uids)

    def notify(self, name: str, realm: Hashable) -> list["Fiber"]:
        notified = []
        for fiber in list(self.dependents.get(name, ())):
            if fiber.ctx._realm(name) == realm:
                fiber._refresh_epoch()
                notified.append(fiber)
        return notified

    # ---- provide / withdraw / set ---------------------------------------------------------------
    def provide(self, fiber: "Fiber", name: str, realm: Hashable, value: Any, check) -> Callable[[], Any]:
        key = (name, realm)
        existing = self.bindings.get(key)
        if existing is not None:
            raise CordisError(f'service "{name}" has been registered at <{existing.fiber.name}>',
                              "DUPLICATE_SERVICE")
        binding = Binding(name, realm, value, fiber, check)
        self.bindings[key] = binding
        fiber._provided[key] = binding
        fiber._provided_view[name] = binding
        if fiber.state is State.ACTIVE:
            self.notify(name, realm)
        return lambda: self._withdraw(binding)

    def _withdraw(self, binding: Binding):
        key = (binding.name, binding.realm)
        provider = binding.fiber
        if self.bindings.get(key) is binding:
            del self.bindings[key]
        provider._provided.pop(key, None)
        waiting = [f for f in self.notify(binding.name, binding.realm) if f._busy]

        def drop_view() -> None:
            if provider._provided_view.get(binding.name) is binding:
                del provider._provided_view[binding.name]

        if not waiting:
            drop_view()
            return None

        async def after_dependents_settle() -> None:
            # The provider still reads its own service while its dependents tear down.
            await asyncio.gather(*(f.wait(raise_error=False) for f in waiting))
            drop_view()
        return spawn(after_dependents_settle())

    def set(self, fiber: "Fiber", name: str, realm: Hashable, value: Any) -> None:
        binding = self.bindings.get((name, realm))
        if binding is None:
            raise CordisError(f'cannot set property "{name}" without provide', "SET_WITHOUT_PROVIDE")
        if binding.fiber is not fiber:
            raise CordisError(f'cannot set property "{name}" in multiple fibers', "SET_MULTIPLE_FIBERS")
        binding.value = value

    def notify_provided(self, fiber: "Fiber") -> None:
        for name, realm in list(fiber._provided):
            self.notify(name, realm)
