"""Pre-started workers: spawning ``python3`` is most of a run's fixed cost, so a row keeps one spawned
worker waiting for its ``boot`` frame. A worker serves exactly one run — :meth:`take` hands it over and
starts the next one — so no process is ever reused across runs. The waiting worker has run no model
code and holds nothing but its scratch directory; :meth:`close` (unload of the row) kills it.
"""
from __future__ import annotations

import asyncio

from .worker import WorkerProcess


class WorkerPool:
    def __init__(self, size: int = 1, python: str | None = None, confinement=None):
        """``confinement()`` gives the worker's sandbox settings at each spawn: a dict of
        :class:`WorkerProcess` keywords (``sandbox``, ``mode``, ``network``); none means the defaults."""
        self.size, self.python = size, python
        self.confinement = confinement or dict
        self.idle: list[WorkerProcess] = []
        self.closed = False
        self._refill: asyncio.Handle | None = None

    def take(self) -> WorkerProcess:
        """A fresh worker, pre-started when one is waiting. The refill is the caller's to schedule
        (:meth:`prestart`) once the run is over, so spawning the next worker never competes with it."""
        worker = None
        while self.idle and worker is None:
            candidate = self.idle.pop(0)
            if candidate.poll() is None:
                worker = candidate
            else:
                candidate.kill()
        if worker is None:
            worker = WorkerProcess(self.python, **self.confinement())    # may raise SANDBOX_UNAVAILABLE
        return worker

    def idle_pids(self) -> set[int]:
        return {w.pid for w in self.idle}

    def prestart(self) -> None:
        """Start the missing waiting workers on the next loop pass."""
        if self.closed or self.size <= 0 or self._refill is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._refill = loop.call_soon(self._fill)

    def _fill(self) -> None:
        self._refill = None
        from dshctl.agents.sandbox.policy import SandboxUnavailableError
        while not self.closed and len(self.idle) < self.size:
            try:
                self.idle.append(WorkerProcess(self.python, **self.confinement()))
            except SandboxUnavailableError:
                return          # take() says so to the run that needs a worker

    def close(self) -> None:
        self.closed = True
        if self._refill is not None:
            self._refill.cancel()
            self._refill = None
        while self.idle:
            self.idle.pop().kill()
