"""A total deadline for each registry request, on top of httpx's per-read timeout.

httpx times out a read that makes no progress, but a registry sending one byte a second always
makes progress: ``plugin add`` waited past 150 s holding the profile lock and ``store.lock``. The
client's connections therefore go through a network backend whose every socket read and write
waits at most until the deadline the calling thread set (``until``); past it the read fails as a
timeout, which the registry client reports as the deadline. Threads are independent (thread-local).
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator

import httpcore

_local = threading.local()


@contextlib.contextmanager
def until(at: float | None) -> Iterator[None]:
    """Socket operations of this thread end by ``at`` (``time.monotonic()``), None: no deadline."""
    previous = getattr(_local, "at", None)
    _local.at = at
    try:
        yield
    finally:
        _local.at = previous


def passed() -> bool:
    at = getattr(_local, "at", None)
    return at is not None and time.monotonic() >= at


def _bounded(timeout: float | None) -> float | None:
    at = getattr(_local, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> "_Stream":
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def transport(httpx, **kwargs):
    """An ``httpx.HTTPTransport`` whose connections use :class:`DeadlineBackend`."""
    made = httpx.HTTPTransport(**kwargs)
    made._pool._network_backend = DeadlineBackend()  # httpx takes no backend; the pool does
    return made
