"""A tool process's output and end: each stream's tail in memory (the whole in a spill file), and stopping
a process group (SIGTERM, then SIGKILL after a grace period). Used by ``bash`` and its background jobs."""
from __future__ import annotations

import asyncio
import os
import signal as signals
import tempfile
from pathlib import Path


class Stream:
    """One output stream: its tail in memory, the whole of it in a spill file once it outgrows the cap."""

    def __init__(self, cap: int, spill_dir: Path, label: str):
        self.cap, self.spill_dir, self.label = cap, spill_dir, label
        self.tail = bytearray()
        self.total = 0
        self.spill = None
        self.spill_path: str | None = None
        self.unread = bytearray()        # what a background job's reader has not seen yet

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.unread += data
        if len(self.unread) > self.cap:
            del self.unread[:len(self.unread) - self.cap]
        if self.spill is None and len(self.tail) + len(data) > self.cap:
            fd, self.spill_path = tempfile.mkstemp(prefix=f"bash-{self.label}-", suffix=".log", dir=self.spill_dir)
            self.spill = os.fdopen(fd, "wb")
            self.spill.write(self.tail)
        if self.spill is not None:
            self.spill.write(data)
        self.tail += data
        if len(self.tail) > self.cap:
            del self.tail[:len(self.tail) - self.cap]

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()

    def text(self) -> str:
        text = self.tail.decode("utf-8", errors="replace")
        if self.spill_path is None:
            return text
        return f"{text}\n[output truncated; full output: {self.spill_path}]"

    def take_unread(self) -> str:
        out = self.unread.decode("utf-8", errors="replace")
        self.unread.clear()
        return out


async def pump(reader: asyncio.StreamReader, stream: Stream) -> None:
    while chunk := await reader.read(65536):
        stream.feed(chunk)


async def exited(proc: asyncio.subprocess.Process) -> int:
    """The exit status as soon as the process ended. (asyncio's ``wait()`` also waits until every pipe is
    closed, which a grandchild left running in the background can hold open for ever.)"""
    delay = 0.002
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


async def stop_group(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """SIGTERM the command's process group, SIGKILL what is left after the grace period."""
    for sig in (signals.SIGTERM, signals.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            await asyncio.wait_for(exited(proc), grace_s)
            return
        except asyncio.TimeoutError:
            continue


DRAIN_S = 0.5   # how long output is still read after the command itself ended


async def drain(proc: asyncio.subprocess.Process, pumps: list, grace_s: float = DRAIN_S) -> None:
    """The command ended; what it left running in its group may hold the pipes open (``sleep 60 &``): read
    for ``grace_s`` more, then SIGKILL the group and stop reading — a call never outlives its command."""
    _, pending = await asyncio.wait(pumps, timeout=grace_s)
    if not pending:
        return
    try:
        os.killpg(proc.pid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _, pending = await asyncio.wait(pending, timeout=1)
    for pump_task in pending:
        pump_task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
