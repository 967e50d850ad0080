"""Run one model program: the host side of a run, with the worker as a hostile party.

``await run_program(program, bindings, limits)`` starts a fresh worker, boots it, runs the program and
returns a :class:`RunResult` (``logs``, ``value`` when the program returned one, ``error`` as
``{kind, message}`` — dsh's failure kinds: exception, timeout, abort, worker-exit, invalid-output,
output-limit). A failed program is a result, never an exception; cancellation of the awaiting task
(unload of the row) kills the worker before it propagates.

Every inbound frame is size-capped (``maxFrameBytes``), parsed strictly and rebuilt
(``protocol.rebuild_frame``) before anything reads it. Calls are looked up as own entries of plain dicts,
unknown and duplicate ids are refused, at most ``maxCallsInFlight`` run at once, and replies the worker
does not read are bounded too. The host never evaluates anything the worker sends.
"""
from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from . import protocol
from .ledger import LogLedger
from .worker import WorkerProcess

Binding = Callable[[Any], Awaitable[Any]]
ABSENT = object()


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 30
    address_space_bytes: int = 1 << 30
    wall_seconds: float = 120.0
    max_log_bytes: int = 1 << 20
    max_value_bytes: int = 1 << 20
    max_frame_bytes: int = 16 << 20
    max_calls_in_flight: int = 64


@dataclass
class RunResult:
    logs: list[str] = field(default_factory=list)
    value: Any = ABSENT
    error: dict | None = None

    @property
    def has_value(self) -> bool:
        return self.value is not ABSENT


@dataclass(frozen=True)
class Namespace:
    """One program global (``tools``) with its callables; ``error_class`` is the rejection class the
    worker mints (dsh: ``ToolCallError`` with ``toolName``)."""
    global_name: str
    functions: dict[str, Binding]
    error_class: tuple[str, str] = ("ToolCallError", "toolName")


class _Settled(Exception):
    def __init__(self, error: dict | None = None, value: Any = ABSENT):
        self.error, self.value = error, value


def _failure(kind: str, message: str) -> dict:
    return {"kind": kind, "message": message}


class Run:
    """One run's state. Created and driven by :func:`run_program`."""

    def __init__(self, namespaces: list[Namespace], limits: Limits):
        self.limits = limits
        self.tables = {ns.global_name: dict(ns.functions) for ns in namespaces}
        self.namespaces = namespaces
        self.ledger = LogLedger(limits.max_log_bytes)
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.seen_ids: set[int] = set()
        self.calls: dict[int, asyncio.Task] = {}
        self.booted = False
        self.outcome: asyncio.Future | None = None
        self.worker: WorkerProcess | None = None
        self.boot_acked: asyncio.Future | None = None
        self.hangup_timer: asyncio.TimerHandle | None = None
        self.timers: list[asyncio.TimerHandle] = []
        self.waiters: list[asyncio.Future] = []

    # -- settling ------------------------------------------------------------------------------
    def stop(self, kind: str, message: str) -> None:
        """End the run from outside (unload of the row): the worker is killed as the run unwinds."""
        self.settle(_failure(kind, message))

    def settle(self, error: dict | None = None, value: Any = ABSENT) -> None:
        if self.outcome is not None and not self.outcome.done():
            self.outcome.set_result(_Settled(error, value))

    # -- channel ------------------------------------------------------------------------------
    def on_channel_readable(self) -> None:
        """Read everything the socket holds now; frames are handled as each line completes."""
        sock = self.worker.channel
        while self.outcome is not None and not self.outcome.done():
            try:
                chunk = sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._on_hangup()
                return
            self.inbox += chunk
            self._handle_lines()

    def _on_hangup(self) -> None:
        # The worker's end closes just before its exit status is ready; give the exit a moment to speak
        # first, so a crash is reported as a crash and not as a closed channel.
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.worker.channel.fileno())
        self.hangup_timer = loop.call_later(
            0.2, self.settle, _failure("worker-exit", "the worker closed its channel before completing"))

    def _handle_lines(self) -> None:
        while self.outcome is not None and not self.outcome.done():
            index = self.inbox.find(b"\n")
            if index < 0:
                if len(self.inbox) > self.limits.max_frame_bytes:
                    self._oversize()
                return
            if index > self.limits.max_frame_bytes:
                self._oversize()
                return
            line = bytes(self.inbox[:index])
            del self.inbox[:index + 1]
            frame = protocol.rebuild_frame(protocol.parse_frame(line))
            if frame is not None:
                self.on_frame(frame)

    def _oversize(self) -> None:
        self.inbox.clear()
        self.settle(_failure("output-limit", f"the worker sent a frame larger than {self.limits.max_frame_bytes} bytes"))

    def send(self, frame: dict) -> None:
        if self.worker.closed:
            return                      # the run is over; a late answer has nobody to go to
        self.outbox += protocol.encode_frame(frame)
        if len(self.outbox) > 4 * self.limits.max_frame_bytes:
            self.outbox.clear()
            self.settle(_failure("exception", "the worker stopped reading its channel"))
            return
        self.flush_outbox()

    def flush_outbox(self) -> None:
        loop = asyncio.get_running_loop()
        sock = self.worker.channel
        try:
            while self.outbox:
                sent = sock.send(self.outbox)
                del self.outbox[:sent]
        except (BlockingIOError, InterruptedError):
            loop.add_writer(sock.fileno(), self.flush_outbox)
            return
        except OSError:
            self.outbox.clear()
        loop.remove_writer(sock.fileno())

    def on_stray_output(self, stream) -> None:
        """Bytes the program wrote to fd 1/2 directly (a subprocess, ``os.write``): logs, same ledger."""
        try:
            chunk = os.read(stream.fileno(), 1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            asyncio.get_running_loop().remove_reader(stream.fileno())
            return
        self.ledger.admit(chunk.decode("utf-8", "replace").rstrip("\n"))

    def drain_stray(self, stream) -> None:
        for _ in range(64):
            before = len(self.ledger.entries)
            self.on_stray_output(stream)
            if len(self.ledger.entries) == before:
                return

    # -- frames -------------------------------------------------------------------------------
    def on_frame(self, frame: dict) -> None:
        kind = frame["type"]
        if kind == "boot-ack":
            if not self.boot_acked.done():
                self.boot_acked.set_result(True)
        elif not self.booted:
            return                      # nothing but boot-ack can precede the run
        elif kind == "log":
            self.ledger.admit(frame["text"], from_worker_marker=frame.get("truncated", False))
        elif kind == "call":
            self.on_call(frame)
        elif kind == "done":
            self.on_done(frame)

    def on_call(self, frame: dict) -> None:
        call_id = frame["id"]
        if call_id in self.seen_ids:
            return                      # each id is answered at most once; a repeat is ignored
        self.seen_ids.add(call_id)
        if len(self.calls) >= self.limits.max_calls_in_flight:
            self.send({"type": "reply", "id": call_id, "ok": False,
                       "message": f"too many tool calls in flight (limit {self.limits.max_calls_in_flight})"})
            return
        table = self.tables.get(frame["global"])
        function = table.get(frame["name"]) if table is not None else None
        if function is None:
            self.send({"type": "reply", "id": call_id, "ok": False,
                       "message": f"unknown binding {frame['global'] + '.' + frame['name']!r}"})
            return
        task = asyncio.ensure_future(self._answer(call_id, function, frame["args"]))
        self.calls[call_id] = task
        task.add_done_callback(lambda _t, i=call_id: self.calls.pop(i, None))

    async def _answer(self, call_id: int, function: Binding, args: Any) -> None:
        try:
            value = await function(args)
        except asyncio.CancelledError:
            raise
        except Exception as error:      # a binding failure is the program's rejection, not the host's
            self.send({"type": "reply", "id": call_id, "ok": False, "message": str(error) or type(error).__name__})
            return
        if protocol.lossless_violation(value) is not None:
            self.send({"type": "reply", "id": call_id, "ok": False,
                       "message": "binding resolution must be lossless JSON"})
            return
        self.send({"type": "reply", "id": call_id, "ok": True, "value": value})

    def on_done(self, frame: dict) -> None:
        if "error" in frame:
            self.settle(frame["error"])
            return
        if "value" not in frame:
            self.settle()
            return
        verdict = protocol.check_done_value(frame["value"], self.limits.max_value_bytes)
        if verdict == "over-budget":
            self.settle(_failure("output-limit", f"program completion exceeds {self.limits.max_value_bytes} bytes"))
        elif verdict is not None:
            self.settle(_failure("invalid-output", "program completion must be lossless JSON"))
        else:
            self.settle(value=frame["value"])

    # -- lifecycle ----------------------------------------------------------------------------
    def boot_frame(self) -> dict:
        return {"type": "boot", "cpuSeconds": self.limits.cpu_seconds,
                "addressSpaceBytes": self.limits.address_space_bytes,
                "maxLogBytes": self.limits.max_log_bytes, "maxValueBytes": self.limits.max_value_bytes,
                "namespaces": [{"global": ns.global_name, "names": list(ns.functions),
                                "errorClass": {"name": ns.error_class[0], "memberNameProperty": ns.error_class[1]}}
                               for ns in self.namespaces]}

    def on_exit(self) -> None:
        cpu_used = self.worker.cpu_seconds_used()      # read from the zombie, before reaping it
        code = self.worker.poll()
        if code is None:
            return
        asyncio.get_running_loop().remove_reader(self.worker.pidfd)
        self.on_channel_readable()      # frames written before the exit are still in the socket
        if code < 0 and (-code == signal.SIGXCPU or (-code == signal.SIGKILL and cpu_used >= self.limits.cpu_seconds)):
            self.settle(_failure("timeout", f"CPU budget exhausted ({self.limits.cpu_seconds}s of CPU time)"))
        elif code < 0:
            self.settle(_failure("worker-exit", f"worker killed by {signal.Signals(-code).name} before completing"))
        else:
            self.settle(_failure("worker-exit", f"worker exited with code {code} before completing"))

    def watch(self, loop: asyncio.AbstractEventLoop, abort: asyncio.Event | None) -> None:
        """Readers on the channel, the exit (pidfd) and fd 1/2; the abort signal; the wall clock."""
        worker = self.worker
        loop.add_reader(worker.channel.fileno(), self.on_channel_readable)
        loop.add_reader(worker.pidfd, self.on_exit)
        for stream in (worker.proc.stdout, worker.proc.stderr):
            loop.add_reader(stream.fileno(), self.on_stray_output, stream)
        if abort is not None:
            waiter = asyncio.ensure_future(abort.wait())
            waiter.add_done_callback(lambda _f: self.settle(_failure("abort", "the turn was aborted")))
            self.waiters.append(waiter)
        self.timers.append(loop.call_later(
            self.limits.wall_seconds, self.settle,
            _failure("timeout", f"wall-clock ceiling reached ({self.limits.wall_seconds:g}s)")))

    async def release(self, loop: asyncio.AbstractEventLoop) -> None:
        """Kill the worker and leave nothing behind: no reader, timer, waiter or binding task."""
        worker = self.worker
        for handle in (*self.timers, self.hangup_timer):
            if handle is not None:
                handle.cancel()
        for waiter in self.waiters:
            waiter.cancel()
        for fd in (worker.channel.fileno(), worker.pidfd, worker.proc.stdout.fileno(), worker.proc.stderr.fileno()):
            loop.remove_reader(fd)
        loop.remove_writer(worker.channel.fileno())
        worker.kill()
        tasks = [*self.calls.values(), *self.waiters]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if not self.boot_acked.done():
            self.boot_acked.cancel()


async def run_program(program: str, namespaces: list[Namespace], limits: Limits = Limits(), *,
                      abort: asyncio.Event | None = None, python: str | None = None,
                      worker: WorkerProcess | None = None,
                      on_start: Callable[["Run"], None] | None = None,
                      on_end: Callable[["Run"], None] | None = None) -> RunResult:
    """Run ``program`` in a fresh worker; ``on_start``/``on_end`` let an owner track live runs (to
    :meth:`Run.stop` them when it unloads); ``worker`` is a fresh, never-booted one from a pool."""
    loop = asyncio.get_running_loop()
    run = Run(namespaces, limits)
    run.outcome, run.boot_acked = loop.create_future(), loop.create_future()
    run.worker = worker or WorkerProcess(python)
    if on_start is not None:
        on_start(run)
    try:
        run.watch(loop, abort)
        run.send(run.boot_frame())
        await asyncio.wait([run.boot_acked, run.outcome], return_when=asyncio.FIRST_COMPLETED)
        if not run.outcome.done():
            run.booted = True
            run.send({"type": "run", "program": program})
        settled: _Settled = await run.outcome
        for stream in (run.worker.proc.stdout, run.worker.proc.stderr):
            run.drain_stray(stream)     # bytes already written when the run ended still count
        return RunResult(run.ledger.entries, settled.value, settled.error)
    finally:
        await run.release(loop)
        if on_end is not None:
            on_end(run)
