"""One shared, change-driven feed of a document for any number of Server-Sent-Events clients.

The document is computed when something says it changed (:meth:`Hub.poke`), not on a timer and not
per client: one task per hub, however many clients listen, computes it at most once per ``settle`` s
(a burst of changes costs one computation), compares it with the last one sent (Python equality, no
encoding) and, only when it differs, encodes it once; every client is sent the same bytes. A slow
``probe`` (a cheap fingerprint of in-memory state with no change signal of its own, such as the
agents' running/idle) is compared every ``probe_period`` s and counts as a poke when it moves. A slow
``refresh`` (default 10 s) recomputes anyway, for what has no change signal (e.g. files edited with the
watcher off). Closing the hub (its row unloads) ends every client's stream.
"""
from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, AsyncIterator, Callable


class Hub:
    def __init__(self, compute: Callable[[], Any], *, settle: float = 0.05, refresh: float = 10.0,
                 ignore: Callable[[Any], Any] = lambda doc: doc,
                 probe: Callable[[], Any] | None = None, probe_period: float = 0.5,
                 encode: Callable[[Any], bytes] = lambda doc: json.dumps(doc, default=str).encode()):
        self.compute, self.settle, self.refresh, self.ignore = compute, settle, refresh, ignore
        self.encode = encode
        self.probe, self.probe_period = probe, probe_period
        self.clients = 0
        self.closed = False
        self.computed = 0                 # how many times compute() ran (tests, the benchmark)
        self._doc: bytes | None = None
        self._changed = asyncio.Event()
        self._poked = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def stream(self) -> AsyncIterator[bytes]:
        self.clients += 1
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        try:
            sent = None
            while not self.closed:
                if self._doc is not None and self._doc is not sent:
                    sent = self._doc
                    yield sent
                changed = self._changed
                await changed.wait()
        finally:
            self.clients -= 1

    def poke(self) -> None:
        """Something the document shows changed: recompute it (soon, once for all clients)."""
        self._poked.set()

    async def _run(self) -> None:
        last: Any = object()
        while self.clients and not self.closed:
            self._poked.clear()
            doc = self.compute()
            if inspect.isawaitable(doc):
                doc = await doc          # a compute that reads files does so off the loop
            self.computed += 1
            seen = self.ignore(doc)
            if seen != last:
                last, self._doc = seen, self.encode(doc)
                self._wake()
            await self._next_change()
            await asyncio.sleep(self.settle)     # the rest of a burst of changes joins this one

    async def _next_change(self) -> None:
        """Until poked, the probe's fingerprint moves, or ``refresh`` s pass."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.refresh
        mark = self.probe() if self.probe is not None else None
        while not self._poked.is_set() and (left := deadline - loop.time()) > 0:
            step = min(left, self.probe_period) if self.probe is not None else left
            try:
                await asyncio.wait_for(self._poked.wait(), step)
            except asyncio.TimeoutError:
                if self.probe is not None and self.probe() != mark:
                    return

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def close(self) -> None:
        self.closed = True
        self._wake()
        if self._task is not None:
            self._task.cancel()
