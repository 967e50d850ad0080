"""The context: what a plugin receives as ``ctx``: its fiber, realms and intercepts, and the API."""
from __future__ import annotations

from typing import Any, Callable, Hashable

from .effects import ANONYMOUS, EffectHandle, PluginHandle
from .events import Listener
from .fiber import Fiber
from .plugin import InlinePlugin
from .registry import Registry, RuntimeOptions
from .services import ROOT_REALM, ServiceAccessError
from .states import State
from .errors import CordisError

class Context:
    """``Context()`` makes a new runtime (registry + root fiber) and returns its root context.

    Contexts derived with :meth:`isolate` / :meth:`intercept` share the fiber and differ in realms or
    intercepts; each plugin fiber gets its own context chained to the one that plugged it.
    Services are read as attributes (``ctx.tools``) or with ``ctx[name]``.
    """

    __slots__ = ("registry", "fiber", "_realms", "_intercepts")

    def __init__(self, options: RuntimeOptions | None = None):
        registry = Registry(options)
        root = registry.root.ctx
        self.registry = registry
        self.fiber = registry.root
        self._realms = root._realms
        self._intercepts = root._intercepts
        registry.root.ctx = self

    @classmethod
    def _for_fiber(cls, fiber: Fiber, parent: "Context | None") -> "Context":
        ctx = object.__new__(cls)
        ctx.registry = fiber.registry
        ctx.fiber = fiber
        ctx._realms = parent._realms if parent is not None else {}
        chain = parent._intercepts if parent is not None else ()
        own = {name: cfg for name, cfg in fiber.inject.items() if cfg is not None}
        ctx._intercepts = chain + (own,) if own else chain
        return ctx

    def _derive(self, realms: dict | None = None, intercepts: tuple | None = None) -> "Context":
        ctx = object.__new__(Context)
        ctx.registry = self.registry
        ctx.fiber = self.fiber
        ctx._realms = self._realms if realms is None else realms
        ctx._intercepts = self._intercepts if intercepts is None else intercepts
        return ctx

    @property
    def root(self) -> "Context":
        return self.registry.root.ctx

    # ---- plugins and effects -------------------------------------------------------------------
    def plugin(self, plugin: Any, config: Any = None) -> Fiber:
        """Start ``plugin`` as a child fiber of this context's fiber; returns the fiber at once."""
        parent = self.fiber
        parent.ensure_active()
        runtime = self.registry.runtime_for(plugin)
        fiber = Fiber(self.registry, parent, self, runtime, config)
        runtime.fibers[fiber] = None
        fiber._handle = PluginHandle(parent, fiber)
        events = self.registry.events
        if events.has_listeners("internal/plugin"):
            try:
                events.emit("internal/plugin", (fiber,))  # the loader merges a row's inject here
            except BaseException:
                fiber.dispose()  # a failing hook leaves no half-registered fiber behind
                raise
            fiber.ctx = Context._for_fiber(fiber, self)
        self.registry.services.track(fiber)
        fiber._refresh_epoch()
        return fiber

    def inject(self, deps: Any, fn: Callable[..., Any]) -> Fiber:
        """Shorthand for ``ctx.plugin({inject: deps, apply: fn})``."""
        return self.plugin(InlinePlugin(apply=fn, inject=deps, name=getattr(fn, "__name__", None)))

    def effect(self, execute: Callable[[], Any], label: str = ANONYMOUS) -> EffectHandle:
        return self.fiber.effect(execute, label)

    def get_effects(self) -> list[dict]:
        return self.fiber.get_effects()

    # ---- events --------------------------------------------------------------------------------
    def on(self, name: str, fn: Callable[..., Any], *, prepend: bool = False, once: bool = False,
           global_: bool = False) -> EffectHandle:
        listener = Listener(name, fn, self, once, global_)
        handle = self.fiber.effect(lambda: self.registry.events.add(listener, prepend), f'ctx.on("{name}")')
        listener.handle = handle
        return handle

    def emit(self, name: str, *args: Any, scope=None) -> None:
        self.registry.events.emit(name, args, scope)

    def bail(self, name: str, *args: Any, scope=None) -> Any:
        return self.registry.events.bail(name, args, scope)

    async def parallel(self, name: str, *args: Any, scope=None) -> None:
        await self.registry.events.parallel(name, args, scope)

    async def serial(self, name: str, *args: Any, scope=None) -> Any:
        return await self.registry.events.serial(name, args, scope)

    async def waterfall(self, name: str, *args: Any, default: Any = None, scope=None, timeout: Any = ...) -> Any:
        return await self.registry.events.waterfall(name, args, default, scope, timeout)

    # ---- services ------------------------------------------------------------------------------
    def _realm(self, name: str) -> Hashable:
        return self._realms.get(name, ROOT_REALM)

    def provide(self, name: str, value: Any, check: Callable[[], Any] | None = None) -> EffectHandle:
        """Provide ``value`` as service ``name`` in this context's realm, as an effect."""
        _check_property_kind(name)
        realm = self._realm(name)
        fiber = self.fiber
        return fiber.effect(lambda: self.registry.services.provide(fiber, name, realm, value, check),
                            f'ctx.provide("{name}")')

    def set(self, name: str, value: Any) -> None:
        """Rewrite a provided value in place; restarts nothing."""
        self.registry.services.set(self.fiber, name, self._realm(name), value)

    def get(self, name: str) -> Any:
        """The service value if its provider is ACTIVE, else None. As Cordis's ``reflect.get``, this
        does not consult the service's ``check()``: that gates dependents only."""
        binding = self.registry.services.lookup(name, self._realm(name))
        return binding.value if binding is not None and binding.fiber.state is State.ACTIVE else None

    def _read(self, name: str) -> Any:
        fiber = self.fiber
        while fiber is not None:
            binding = fiber._provided_view.get(name) or fiber._injected_view.get(name)
            if binding is not None:
                return binding.value
            if name in fiber.inject:
                raise ServiceAccessError(f'cannot get required service "{name}" in inactive context',
                                         "INACTIVE_SERVICE")
            fiber = fiber.parent
        raise ServiceAccessError(f'cannot get property "{name}" without inject', "UNDECLARED_SERVICE")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in Context.__slots__:
            raise AttributeError(name)
        return self._read(name)

    def __getitem__(self, name: str) -> Any:
        return self._read(name)

    def isolate(self, name: str, label: str | None = None) -> "Context":
        """A context with a fresh realm for ``name``; contexts isolated under one ``label`` share it."""
        realm: Hashable = ("label", name, label) if label is not None else ("local", object())
        return self._derive(realms={**self._realms, name: realm})

    def intercept(self, name: str, config: dict) -> "Context":
        return self._derive(intercepts=self._intercepts + ({name: config},))

    def intercept_config(self, name: str) -> dict:
        """The intercept config for ``name``: the chain merged from outer to inner (inner wins)."""
        merged: dict = {}
        for table in self._intercepts:
            cfg = table.get(name)
            if isinstance(cfg, dict):
                merged.update(cfg)
        return merged

    def __repr__(self) -> str:
        return f"<Context of {self.fiber!r}>"


_RESERVED = {n for n in dir(Context) if not n.startswith("__")} | set(Context.__slots__)


def _check_property_kind(name: str) -> None:
    if name in _RESERVED:
        raise CordisError(f'property "{name}" is already declared as method', "PROPERTY_KIND")
