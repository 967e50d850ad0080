"""Effects: a setup that runs at once and the disposers it collects, undone LIFO exactly once.

``fiber.effect(execute, label)`` builds an :class:`EffectHandle`. The handle is registered on its fiber
*before* ``execute()`` runs (so an unload that starts during setup waits for it and then disposes), and
calling the handle disposes the effect.
"""
from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Callable

from ._aio import DONE, is_settled, spawn
from .errors import logger

if TYPE_CHECKING:  # pragma: no cover
    from .fiber import Fiber

ANONYMOUS = "anonymous"


def _invalid_effect() -> TypeError:
    return TypeError("Invalid effect")


class EffectHandle:
    """The dispose handle of one effect.

    * ``handle()`` disposes (idempotent) and returns an awaitable that settles when every disposer ran.
    * ``await handle`` waits for setup and returns the handle, or raises the setup error.
    """

    __slots__ = ("fiber", "label", "_disposers", "_owner", "_setup", "_error", "_disposing", "_log_async")

    def __init__(self, fiber: "Fiber", execute: Callable[[], Any], label: str = ANONYMOUS,
                 *, log_async_errors: bool = True):
        self.fiber = fiber
        self.label = label
        self._disposers: list[Callable[[], Any]] = []
        self._owner: Any = fiber          # the fiber (top level) or the parent handle (nested)
        self._setup: asyncio.Task | None = None
        self._error: BaseException | None = None
        self._disposing: Any = None       # the awaitable returned by the first dispose call
        self._log_async = log_async_errors
        fiber._effects[self] = None
        try:
            self._accept(execute())
        except BaseException:
            self._rollback_now()
            raise

    # ---- setup -------------------------------------------------------------------------------
    def _accept(self, result: Any) -> None:
        if result is None:
            return
        if isinstance(result, EffectHandle) or (callable(result) and not inspect.isawaitable(result)):
            self._collect(result)
        elif hasattr(result, "__anext__"):
            self._setup = spawn(self._drive_async_iterator(result))
        elif inspect.isawaitable(result):
            self._setup = spawn(self._await_result(result))
        elif inspect.isgenerator(result):
            self._drain(result)
        elif isinstance(result, Iterable) and not isinstance(result, (str, bytes, Mapping)):
            for item in result:
                self._collect(item)
        else:
            raise _invalid_effect()

    def _drain(self, generator) -> None:
        # A generator's return value is a disposer too (Cordis collects it after the yields).
        while True:
            try:
                item = next(generator)
            except StopIteration as stop:
                if stop.value is not None:
                    self._collect(stop.value)
                return
            self._collect(item)

    def _collect(self, item: Any) -> None:
        if item is None:
            return
        if isinstance(item, EffectHandle):
            item._adopt(self)
        elif not callable(item):
            raise _invalid_effect()
        self._disposers.append(item)

    def _adopt(self, parent: "EffectHandle") -> None:
        """Nesting: a handle returned or yielded by another effect leaves the fiber's top-level list."""
        if self._owner is self.fiber:
            self.fiber._effects.pop(self, None)
        self._owner = parent

    async def _await_result(self, awaitable) -> None:
        try:
            self._collect(await awaitable)
        except BaseException as err:  # noqa: BLE001 - cancellation (a timeout) also rolls back
            await self._fail_async(err)

    async def _drive_async_iterator(self, iterator) -> None:
        try:
            # The first step is requested during setup (as in JS); before each later step, stop once
            # disposed. The step in flight always lands and is collected.
            first = True
            while first or self._disposing is None:
                first = False
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    return
                self._collect(item)
        except BaseException as err:  # noqa: BLE001
            await self._fail_async(err)
        finally:
            if self._disposing is not None and hasattr(iterator, "aclose"):
                try:
                    await iterator.aclose()
                except Exception as err:  # noqa: BLE001 - a finally block in user code
                    logger.error("effect %s: closing the async iterator failed", self.label, exc_info=err)

    async def _fail_async(self, err: BaseException) -> None:
        self._error = err
        self._detach()
        if self._disposing is None:
            self._disposing = DONE
        if self._log_async and not isinstance(err, asyncio.CancelledError):
            logger.error("effect %s failed during setup", self.label, exc_info=err)
        pending = self._run_disposers()
        if pending is not DONE:
            await pending

    def _rollback_now(self) -> None:
        self._detach()
        self._disposing = DONE
        pending = self._run_disposers()
        if pending is not DONE:  # an awaitable disposer during a sync rollback: let it finish on its own
            pending.add_done_callback(_consume)

    # ---- disposal ----------------------------------------------------------------------------
    def __call__(self):
        if self._disposing is not None:
            return self._disposing
        self._detach()
        if self._setup is not None and not self._setup.done():
            self._disposing = spawn(self._dispose_after_setup())
        else:
            self._disposing = DONE  # marks "disposed" before the disposers run (re-entrancy)
            self._disposing = self._run_disposers()
        return self._disposing

    def _disarm(self) -> None:
        """Forget the handle without running disposers (its owner is being disposed another way)."""
        self._detach()
        if self._disposing is None:
            self._disposing = DONE
        if self._disposers:
            self._disposers.clear()

    @property
    def disposed(self) -> bool:
        return self._disposing is not None

    async def _dispose_after_setup(self) -> None:
        await asyncio.wait({self._setup})
        pending = self._run_disposers()
        if pending is not DONE:
            await pending

    def _detach(self) -> None:
        owner = self._owner
        if owner is self.fiber:
            owner._effects.pop(self, None)
        elif isinstance(owner, EffectHandle):
            try:
                owner._disposers.remove(self)
            except ValueError:
                pass

    def _run_disposers(self):
        """Run collected disposers newest first; switch to a task at the first awaitable result."""
        while self._disposers:
            result = _call_disposer(self.label, self._disposers.pop())
            if result is not None and result is not DONE and inspect.isawaitable(result):
                if isinstance(result, asyncio.Future) and result.done():
                    _consume(result)
                    continue
                if is_settled(result):
                    continue
                return spawn(self._run_disposers_async(result))
        return DONE

    async def _run_disposers_async(self, pending) -> None:
        while True:
            try:
                await pending
            except Exception as err:  # noqa: BLE001 - disposer failures are logged, never raised
                logger.error("disposer of effect %s failed", self.label, exc_info=err)
            if not self._disposers:
                return
            pending = _call_disposer(self.label, self._disposers.pop())
            if pending is None or pending is DONE or not inspect.isawaitable(pending):
                pending = DONE

    # ---- setup await and introspection -------------------------------------------------------
    def __await__(self):
        if self._setup is not None and not self._setup.done():
            yield from asyncio.wait({self._setup}).__await__()
        if self._error is not None:
            raise self._error
        return self

    @property
    def pending(self) -> bool:
        return self._setup is not None and not self._setup.done()

    def tree(self) -> dict:
        children = [d.tree() for d in self._disposers if isinstance(d, EffectHandle)]
        return {"label": self.label, "children": children}

    def __repr__(self) -> str:
        return f"<EffectHandle {self.label}{' disposed' if self.disposed else ''}>"


class PluginHandle(EffectHandle):
    """The ``ctx.plugin()`` effect on the parent fiber: disposing it disposes the child fiber.

    It holds the child itself instead of a collected ``child.dispose`` bound method in a list: two GC-
    tracked objects fewer per plugged fiber, and no handle -> method -> fiber -> handle cycle.
    """

    __slots__ = ("child",)

    def __init__(self, parent: "Fiber", child: "Fiber"):  # noqa: super().__init__ would run a setup
        self.fiber = parent
        self.label = "ctx.plugin()"
        self._disposers = ()
        self._owner = parent
        self._setup = None
        self._error = None
        self._disposing = None
        self._log_async = True
        self.child = child
        parent._effects[self] = None

    def _run_disposers(self):
        child, self.child = self.child, None
        if child is None or child.dispose().done():
            return DONE
        return spawn(child.wait(raise_error=False))


def _call_disposer(label: str, disposer: Callable[[], Any]) -> Any:
    try:
        return disposer()
    except Exception as err:  # noqa: BLE001
        logger.error("disposer of effect %s failed", label, exc_info=err)
        return None


def _consume(future) -> None:
    """Retrieve a finished future's exception so asyncio does not warn; log real failures."""
    if future.cancelled():
        return
    err = future.exception()
    if err is not None:
        logger.error("disposer failed", exc_info=err)
