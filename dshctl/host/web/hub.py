"""One shared, change-only feed of a document for any number of Server-Sent-Events clients.

The document (the app's status view) is computed at most once per ``period`` s while at least one
client listens, however many listen, encoded once (clients get the same JSON bytes), and sent only
when it changed; closing the hub (its row unloads) ends every client's stream.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Callable


class Hub:
    def __init__(self, compute: Callable[[], Any], period: float = 0.5,
                 ignore: Callable[[Any], Any] = lambda doc: doc):
        self.compute, self.period, self.ignore = compute, period, ignore
        self.clients = 0
        self.closed = False
        self._doc: Any = None
        self._changed = asyncio.Event()
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

    async def _run(self) -> None:
        last = None
        while self.clients and not self.closed:
            doc = self.compute()
            key = json.dumps(self.ignore(doc), sort_keys=True, default=str)
            if key != last:
                last, self._doc = key, json.dumps(doc, default=str).encode()
                self._wake()
            await asyncio.sleep(self.period)

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def close(self) -> None:
        self.closed = True
        self._wake()
        if self._task is not None:
            self._task.cancel()
