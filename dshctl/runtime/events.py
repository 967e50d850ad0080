"""Event dispatch: emit (sync), parallel, serial, bail and waterfall, with listener scoping.

Listeners are kept per event name in registration order. A dispatch may pass ``scope``, a predicate on
the listener's context; listeners registered with ``global_=True`` bypass it.
"""
from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, Callable

from ._aio import callable_name, spawn
from .errors import AggregateError, RuntimeTimeout, logger

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context

Scope = Callable[["Context"], bool]
_DEFAULT = "the default handler"


class Listener:
    __slots__ = ("name", "fn", "ctx", "once", "global_", "handle")

    def __init__(self, name: str, fn: Callable, ctx: "Context", once: bool, global_: bool):
        self.name = name
        self.fn = fn
        self.ctx = ctx
        self.once = once
        self.global_ = global_
        self.handle = None


class EventBus:
    def __init__(self, waterfall_timeout: float | None) -> None:
        self.listeners: dict[str, list[Listener]] = {}
        self.waterfall_timeout = waterfall_timeout

    # ---- registration --------------------------------------------------------------------------
    def add(self, listener: Listener, prepend: bool) -> Callable[[], None]:
        group = self.listeners.setdefault(listener.name, [])
        group.insert(0, listener) if prepend else group.append(listener)
        return lambda: self._remove(listener)

    def _remove(self, listener: Listener) -> None:
        group = self.listeners.get(listener.name)
        if group and listener in group:
            group.remove(listener)
            if not group:
                del self.listeners[listener.name]

    def has_listeners(self, name: str) -> bool:
        return name in self.listeners

    def _targets(self, name: str, scope: Scope | None) -> list[Listener]:
        group = self.listeners.get(name)
        if not group:
            return []
        if scope is None:
            return list(group)
        return [l for l in group if l.global_ or scope(l.ctx)]

    @staticmethod
    def _invoke(listener: Listener, args: tuple) -> Any:
        if listener.once and listener.handle is not None:
            listener.handle()  # "once" disposes its listener before the first call
        return listener.fn(*args)

    # ---- dispatch ------------------------------------------------------------------------------
    def emit(self, name: str, args: tuple, scope: Scope | None = None) -> None:
        for listener in self._targets(name, scope):
            result = self._invoke(listener, args)
            if inspect.isawaitable(result):  # emit does not wait; an async listener's error is logged
                spawn(_log_failure(name, result))

    def bail(self, name: str, args: tuple, scope: Scope | None = None) -> Any:
        for listener in self._targets(name, scope):
            result = self._invoke(listener, args)
            if result is not None and result is not False:
                return result
        return None

    async def serial(self, name: str, args: tuple, scope: Scope | None = None) -> Any:
        for listener in self._targets(name, scope):
            result = self._invoke(listener, args)
            if inspect.isawaitable(result):
                result = await result
            if result is not None and result is not False:
                return result
        return None

    async def parallel(self, name: str, args: tuple, scope: Scope | None = None) -> None:
        pending, errors = [], []
        for listener in self._targets(name, scope):
            try:
                result = self._invoke(listener, args)
            except Exception as err:  # noqa: BLE001 - collected into the aggregate
                errors.append(err)
                continue
            if inspect.isawaitable(result):
                pending.append(result)
        if pending:
            outcomes = await asyncio.gather(*pending, return_exceptions=True)
            errors.extend(o for o in outcomes if isinstance(o, Exception))
        if errors:
            raise AggregateError(f'{len(errors)} listener(s) of "{name}" failed', errors)

    async def waterfall(self, name: str, args: tuple, default: Any = None, scope: Scope | None = None,
                        timeout: float | None | type(...) = ...) -> Any:
        """Each listener gets ``(*args, next)``; ``await next()`` runs the rest of the chain.

        A chain that neither returns nor calls ``next()`` within ``timeout`` raises RuntimeTimeout
        naming the listener holding it.
        """
        listeners = self._targets(name, scope)
        holders: list[str] = []  # stack: the innermost entry is the listener currently holding the chain

        async def run(index: int) -> Any:
            if index >= len(listeners):
                holders.append(_DEFAULT)
                try:
                    value = default() if callable(default) else default
                    return await value if inspect.isawaitable(value) else value
                finally:
                    holders.pop()
            listener = listeners[index]
            holders.append(callable_name(listener.fn))
            try:
                result = self._invoke(listener, (*args, lambda: run(index + 1)))
                return await result if inspect.isawaitable(result) else result
            finally:
                holders.pop()

        limit = self.waterfall_timeout if timeout is ... else timeout
        if limit is None:
            return await run(0)
        task = spawn(run(0))
        while True:
            done, _ = await asyncio.wait({task}, timeout=limit)
            if task in done:
                return task.result()
            if holders and holders[-1] is not _DEFAULT:
                break
            # The default handler (e.g. a fiber restart) is bounded by its own timeouts: keep waiting.
        blamed = holders[-1]
        task.cancel()
        raise RuntimeTimeout(f'waterfall "{name}": {blamed} neither called next() nor returned '
                             f"within {limit}s")


async def _log_failure(name: str, awaitable) -> None:
    try:
        await awaitable
    except Exception as err:  # noqa: BLE001
        logger.error('listener of "%s" failed', name, exc_info=err)
