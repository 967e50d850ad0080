"""The host's HTTP server: aiohttp on the host's own event loop, behind the rules of ``guard``.

aiohttp rather than Starlette + uvicorn: one library that is both the HTTP/1.1 parser and the server,
started with ``AppRunner``/``BaseSite`` inside a running loop (uvicorn wants to own the loop and its
signals), with a C parser that refuses malformed heads itself and a keep-alive timer that also closes a
connection that never completes its first request head (slowloris).

Limits (docs/webui.md), each refused with one status: a head not complete within ``header_timeout`` s
(and an idle keep-alive connection after that long) is closed; a body not read within
``body_timeout`` s is 408; a body over ``max_body`` bytes is 413; a malformed head or
``Content-Length`` is 400 (aiohttp's parser); more than ``max_connections`` open connections get 503.
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Awaitable, Callable

from aiohttp import web
from aiohttp.web_exceptions import HTTPRequestEntityTooLarge

from . import guard
from .messages import EventStream, Request, Response, Tagged

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
}
# aiohttp logs a malformed request it answered with 400 as an error with a traceback; for us that is a
# client's mistake, already answered, not the host's failure.
QUIET = logging.getLogger("dshctl.host.web.protocol")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: 21\r\nConnection: close\r\n\r\ntoo many connections\n")


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    max_body: int = 1024 * 1024
    max_connections: int = 128


Dispatch = Callable[[Request], Awaitable["Response | EventStream"]]


class _Busy(asyncio.Protocol):
    """Answers a connection over the cap with 503 and closes it, without reading a byte."""

    def connection_made(self, transport):
        transport.write(BUSY)
        transport.close()


class _LoopbackSite(web.BaseSite):
    """A TCP site whose protocol factory enforces the connection cap."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, max_connections: int):
        super().__init__(runner)
        self._host, self._port, self._max = host, port, max_connections
        self.port = port

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self.port}"

    def _protocol(self):
        server = self._runner.server
        if len(server.connections) >= self._max:
            return _Busy()
        return server()

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._protocol, self._host, self._port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]


class WebServer:
    def __init__(self, dispatch: Dispatch, host: str, port: int, limits: Limits = Limits(),
                 token: str | None = None, token_hint: str = ""):
        self.dispatch, self.host, self.port, self.limits = dispatch, host, port, limits
        self.token, self.token_hint = token, token_hint
        self._runner: web.AppRunner | None = None
        self._streams: set[asyncio.Task] = set()
        self.refused: dict[int, int] = {}     # status -> count, for the status page and tests

    async def start(self) -> int:
        app = web.Application(client_max_size=self.limits.max_body, handler_args={"max_field_size": 8190})
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1.0,
                                     keepalive_timeout=self.limits.header_timeout, handler_cancellation=True,
                                     logger=QUIET, lingering_time=1.0)
        await self._runner.setup()
        site = _LoopbackSite(self._runner, self.host, self.port, self.limits.max_connections)
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            raise
        self.port = site.port
        return self.port

    async def stop(self) -> None:
        for task in list(self._streams):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _refuse(self, status: int, message: str) -> web.Response:
        self.refused[status] = self.refused.get(status, 0) + 1
        response = _to_aiohttp(Response.error(status, message))
        response.force_close()       # an unread body is not drained (no lingering on a refusal)
        return response

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        refused = guard.refusal(request.method, headers, self.port, self.token, self.token_hint)
        if refused is not None:
            return self._refuse(*refused)
        if request.content_length is not None and request.content_length > self.limits.max_body:
            return self._refuse(413, f"request body over {self.limits.max_body} bytes")
        try:
            body = await asyncio.wait_for(request.read(), self.limits.body_timeout) if request.can_read_body else b""
        except asyncio.TimeoutError:
            return self._refuse(408, f"request body not received within {self.limits.body_timeout:g} s")
        except HTTPRequestEntityTooLarge:
            return self._refuse(413, f"request body over {self.limits.max_body} bytes")
        query = {k: request.query.getall(k)[-1] for k in request.query.keys()}
        answer = await self.dispatch(Request(request.method.upper(), request.path, query, headers, body))
        if isinstance(answer, EventStream):
            return await self._stream(request, answer)
        return _to_aiohttp(answer)

    async def _stream(self, request: web.Request, stream: EventStream) -> web.StreamResponse:
        response = web.StreamResponse(headers={**SECURITY_HEADERS, "Content-Type": "text/event-stream",
                                               "X-Accel-Buffering": "no"})
        task = asyncio.current_task()
        self._streams.add(task)
        events = stream.events.__aiter__()
        beats: asyncio.Task | None = None
        try:
            await response.prepare(request)
            await response.write(b": connected\n\n")
            # The heartbeat runs beside the stream rather than as a timeout on each message: a timed
            # wait per message (a task and a wait set each) was most of a busy chat stream's cost.
            written = [asyncio.get_running_loop().time()]
            beats = asyncio.ensure_future(self._heartbeat(response, stream.heartbeat_s, written, task))
            async for item in events:
                written[0] = asyncio.get_running_loop().time()
                await response.write(_sse(item))
        except ConnectionError:
            pass                     # the client went away
        finally:
            self._streams.discard(task)
            if beats is not None:
                beats.cancel()
            closer = getattr(events, "aclose", None)
            if closer is not None:
                asyncio.ensure_future(closer())   # runs the generator's finally (observers removed)
        return response

    @staticmethod
    async def _heartbeat(response: web.StreamResponse, every: float, written: list, stream: asyncio.Task):
        """A comment after ``every`` s without a message; a client gone ends the stream's task."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                await asyncio.sleep(max(0.0, written[0] + every - loop.time()))
                if loop.time() - written[0] >= every:
                    written[0] = loop.time()
                    await response.write(b": heartbeat\n\n")
        except (ConnectionError, RuntimeError):
            stream.cancel()


def _sse(item) -> bytes:
    head = b""
    if isinstance(item, Tagged):
        head, item = b"id: " + item.id.encode() + b"\n", item.data
    data = item if isinstance(item, bytes) else json.dumps(item, default=str).encode()
    return head + b"data: " + data + b"\n\n"


def _to_aiohttp(response: Response) -> web.Response:
    headers = {**SECURITY_HEADERS, **response.headers, "Content-Type": response.content_type}
    return web.Response(status=response.status, body=response.body, headers=headers)
