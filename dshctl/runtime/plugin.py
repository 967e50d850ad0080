"""Plugin shapes: a function ``(ctx, config)``, a class ``C(ctx, config)``, or an object with ``apply``.

:func:`describe_plugin` turns any of them into a :class:`PluginSpec` with the metadata the runtime reads
(``name``, ``inject``, ``Config``/``schema``) and one uniform ``apply(ctx, config)``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import CordisError


class Service:
    """Base for class plugins that provide themselves as a service.

    ``super().__init__(ctx, "name")`` provides the instance under ``name`` (with :meth:`check` as the
    availability check). :meth:`init` (sync, async, generator or async generator) runs as the class
    plugin's effect, so an async ``init`` keeps dependents PENDING until it finishes.
    """

    def __init__(self, ctx, service_name: str | None = None):
        self.ctx = ctx
        if service_name:
            ctx.provide(service_name, self, check=self.check)

    def init(self) -> Any:
        return None

    def check(self) -> bool:
        return True


@dataclass
class InlinePlugin:
    """What ``ctx.inject(deps, fn)`` plugs: ``{inject: deps, apply: fn}``."""

    apply: Callable[..., Any]
    inject: Any = None
    name: str | None = None


@dataclass
class PluginSpec:
    plugin: Any
    name: str
    inject: dict[str, Any] = field(default_factory=dict)
    schema: Any = None
    apply: Callable[[Any, Any], Any] = None  # type: ignore[assignment]


def normalize_inject(inject: Any) -> dict[str, Any]:
    """A list means every name is required with no intercept; a mapping carries intercept configs."""
    if inject is None:
        return {}
    if isinstance(inject, dict):
        return dict(inject)
    if isinstance(inject, (list, tuple)) and all(isinstance(n, str) for n in inject):
        return {name: None for name in inject}
    raise CordisError(f"invalid inject {inject!r}, expect a list of names or a mapping", "INVALID_INJECT")


def _accepts_config(fn: Callable) -> bool:
    """Python is stricter than JS about extra arguments: call ``fn(ctx)`` when it takes only one."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


def _caller(fn: Callable) -> Callable[[Any, Any], Any]:
    if _accepts_config(fn):
        return fn
    return lambda ctx, config: fn(ctx)


def _class_apply(cls: type) -> Callable[[Any, Any], Any]:
    construct = _caller(cls)

    def apply(ctx, config):
        instance = construct(ctx, config)
        return instance.init() if isinstance(instance, Service) else None
    return apply


def describe_plugin(plugin: Any) -> PluginSpec:
    if inspect.isclass(plugin):
        apply = _class_apply(plugin)
        default_name = plugin.__name__
    elif callable(getattr(plugin, "apply", None)):
        apply = _caller(plugin.apply)
        default_name = getattr(plugin, "__name__", None) or type(plugin).__name__
    elif callable(plugin):
        apply = _caller(plugin)
        default_name = getattr(plugin, "__name__", None) or type(plugin).__name__
    else:
        raise CordisError(
            'invalid plugin, expect function or object with an "apply" method, '
            f"received {type(plugin).__name__}", "INVALID_PLUGIN")
    name = getattr(plugin, "name", None)
    schema = getattr(plugin, "Config", None)
    if schema is None:
        schema = getattr(plugin, "schema", None)
    return PluginSpec(plugin=plugin, name=name if isinstance(name, str) else default_name,
                      inject=normalize_inject(getattr(plugin, "inject", None)), schema=schema, apply=apply)
