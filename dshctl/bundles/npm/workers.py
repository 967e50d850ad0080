"""A small thread pool for the registry's requests and the store's downloads.

``concurrent.futures`` imports ``logging`` (and more) for ~5–8 ms of a ~0.25 s cold ``plugin
add``; this needs only ``threading``. Semantics kept from ``ThreadPoolExecutor`` as dshctl uses
it: ``submit`` returns a job whose ``result()`` waits and re-raises the call's exception; threads
start on demand up to ``max_workers``; ``shutdown()`` drops jobs not yet started (their
``result()`` raises ``Cancelled``) and waits for the running ones; leaving a ``with`` block waits
for every job, as the executor's does. At interpreter exit, as for the executor's threads, jobs not
started are dropped and the running ones finish (the threads are daemons only so that a pool
nobody shut down cannot hold the exit up).
"""
from __future__ import annotations

import threading
import weakref
from collections import deque

_live: "weakref.WeakSet[Workers]" = weakref.WeakSet()  # pools to stop at exit, not kept alive
_hooked: list[bool] = []


def _stop_all() -> None:
    for pool in list(_live):
        pool.shutdown()


class Cancelled(Exception):
    """The pool shut down before this job started."""


class Job:
    __slots__ = ("_done", "_value", "_error", "_call")

    def __init__(self, call=None) -> None:
        self._done = threading.Event()
        self._value = None
        self._error: BaseException | None = None
        self._call = call

    @classmethod
    def finished(cls, value) -> "Job":
        job = cls()
        job._settle(value, None)
        return job

    def _settle(self, value, error: BaseException | None) -> None:
        self._value, self._error, self._call = value, error, None
        self._done.set()

    def _run(self) -> None:
        try:
            value = self._call()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            self._settle(None, exc)
        else:
            self._settle(value, None)

    def result(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value


class Workers:
    def __init__(self, max_workers: int, name: str) -> None:
        self._max = max(1, max_workers)
        self._name = name
        self._queue: deque[Job | None] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False
        _live.add(self)
        hook = getattr(threading, "_register_atexit", None)  # what concurrent.futures uses
        if hook is not None and not _hooked:
            _hooked.append(True)
            hook(_stop_all)

    def submit(self, fn, *args) -> Job:
        job = Job(lambda: fn(*args))
        with self._ready:
            if self._closed:
                raise RuntimeError("submit after shutdown")
            self._queue.append(job)
            if self._idle == 0 and len(self._threads) < self._max:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self._name}_{len(self._threads)}")
                self._threads.append(thread)
                thread.start()
            else:
                self._ready.notify()
        return job

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    if self._closed:
                        return
                    self._idle += 1
                    self._ready.wait()
                    self._idle -= 1
                job = self._queue.popleft()
            job._run()

    def shutdown(self, cancel: bool = True) -> None:
        """Cancel the jobs not started (unless ``cancel`` is false: then run them), wait for
        the threads."""
        with self._ready:
            self._closed = True
            while cancel and self._queue:
                self._queue.popleft()._settle(None, Cancelled())
            self._ready.notify_all()
        for thread in self._threads:
            thread.join()

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown(cancel=False)
