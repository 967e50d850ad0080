"""Writing the last-good record off the event loop, in order (lastgood.py says what the file holds).

A record is queued when a tree is committed; each write waits for the one queued before it, so the
newest tree lands last. A watcher's apply does not wait for its record before saying ``applied``
(the fsync was most of a reload under ``host run``, issue 30); whoever must see the file on disk
(the rest of the reload pass, ``status``, an explicit reload, ``--confirm``, shutdown) awaits
:meth:`Recorder.settle`. Each row's part of the file is kept between records (``RecordTexts``).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

from . import lastgood


class Recorder:
    def __init__(self, path: Path, profile: str, log):
        self.path = path
        self.profile = profile
        self.log = log
        self.texts = lastgood.RecordTexts()
        self._newest: asyncio.Task | None = None

    def queue(self, rows: list, digest: str) -> None:
        previous = self._newest

        async def write() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)  # in order: the newest lands last
            await self._write(rows, digest)
        self._newest = asyncio.get_running_loop().create_task(write())

    async def settle(self) -> None:
        """Wait until every record queued so far is on disk (or its failure logged)."""
        task = self._newest
        if task is not None:
            await asyncio.shield(task)

    async def _write(self, rows: list, digest: str) -> None:
        try:
            await asyncio.to_thread(lastgood.record, self.path, self.profile, rows, digest, self.texts)
        except (OSError, TypeError, ValueError) as exc:  # the tree runs; only the record is stale
            self.log.event("host/last-good-failed", f"could not record the last-good tree at {self.path}: "
                           f"{exc}; the previous record is kept", level="warn")
        except Exception as exc:  # noqa: BLE001 - a bug here must not fail every later settle()
            self.log.event("host/last-good-failed", f"could not record the last-good tree at {self.path}: "
                           f"internal error: {type(exc).__name__}: {exc}; the previous record is kept",
                           level="error")
