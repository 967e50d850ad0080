"""A turn's abort signal, and the guard that turns an abort into a cancellation of the task awaiting.

``AbortSignal`` is an ``asyncio.Event`` (everything that waits on or tests an abort keeps working) that
also calls its listeners the moment it is set. ``AbortGuard`` uses that to cancel the task that armed
it while the task waits (an HTTP read, a tool body) — with no watcher task per response or per tool
call. For a plain ``asyncio.Event`` the guard falls back to one watcher task (``abort.wait()``).
"""
from __future__ import annotations

import asyncio
from typing import Callable


class AbortSignal(asyncio.Event):
    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Callable[[], None]] = []

    def set(self) -> None:
        if self.is_set():
            return
        super().set()
        for listener in list(self._listeners):
            listener()

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` when the signal is set; returns the function that stops listening."""
        self._listeners.append(listener)

        def stop() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
        return stop


class AbortGuard:
    """While ``active``, setting ``abort`` cancels the task that called :meth:`arm` (once).

    After catching ``CancelledError`` the caller asks :meth:`ours`: True means the abort caused it (the
    cancellation is withdrawn), False that someone else cancelled the task too — theirs stands."""

    def __init__(self, abort: asyncio.Event):
        self.abort = abort
        self.task: asyncio.Task | None = None
        self.active = self.fired = False
        self._stop: Callable[[], object] | None = None

    def arm(self) -> None:
        if self._stop is not None:
            return
        self.task = asyncio.current_task()
        listen = getattr(self.abort, "listen", None)
        if listen is not None:
            self._stop = listen(self._fire)
        else:
            watch = asyncio.ensure_future(self.abort.wait())
            watch.add_done_callback(lambda w: None if w.cancelled() else self._fire())
            self._stop = watch.cancel

    def _fire(self) -> None:
        if self.active and not self.fired and self.task is not None:
            self.fired = True
            self.task.cancel()

    def ours(self) -> bool:
        return self.fired and self.task.uncancel() == 0

    def close(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
