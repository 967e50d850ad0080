"""``@dshctl/http``: an HTTP/1.1 server on loopback where other plugins register routes.

``ctx.http.route(ctx, method, path, handler)`` is an effect of the *caller's* context: the route is
gone when the registering plugin unloads. A handler gets a :class:`Request` and returns a
:class:`Response`, a ``str`` (HTML), or any JSON-able value. Only loopback addresses are accepted: the
host is a local tool, never a network service.
"""
from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from dshctl.host.plugins.logger import log_for

name = "@dshctl/http"
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "host": {"enum": ["127.0.0.1", "localhost", "::1"], "default": "127.0.0.1"},
        "port": {"type": "integer", "minimum": 0, "maximum": 65535, "default": 8787},
    },
}

MAX_HEAD = 16 * 1024
MAX_BODY = 1024 * 1024
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Payload Too Large", 500: "Internal Server Error"}


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes = b""


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict = field(default_factory=dict)

    @classmethod
    def of(cls, value) -> "Response":
        if isinstance(value, Response):
            return value
        if isinstance(value, str):
            return cls(200, value.encode(), "text/html; charset=utf-8")
        return cls(200, (json.dumps(value, indent=2, default=str) + "\n").encode(), "application/json")


class HttpServer:
    """The ``http`` service: the route table and the listening socket."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.routes: dict[tuple[str, str], tuple] = {}
        self._server: asyncio.base_events.Server | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def route(self, ctx, method: str, path: str, handler):
        """Register ``handler`` for ``method path`` as an effect of ``ctx``; returns the effect handle."""
        key = (method.upper(), path)

        def add():
            if key in self.routes:
                raise ValueError(f"route {key[0]} {path} is already registered by {self.routes[key][1]}")
            self.routes[key] = (handler, ctx.fiber.name)
            return lambda: self.routes.pop(key, None)
        return ctx.effect(add, f"http.route({key[0]} {path})")

    async def start(self):
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]  # port 0 picks a free one
        return self.stop

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            response = await self.dispatch(request) if isinstance(request, Request) else request
            writer.write(_encode(response, head_only=isinstance(request, Request) and request.method == "HEAD"))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def dispatch(self, request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        entry = self.routes.get((method, request.path))
        if entry is None:
            if request.path == "/" and method == "GET":
                return Response.of(self.index())
            allowed = any(path == request.path for _, path in self.routes)
            return Response(405 if allowed else 404, b"not found\n" if not allowed else b"method not allowed\n")
        try:
            result = entry[0](request)
            if inspect.isawaitable(result):
                result = await result
            return Response.of(result)
        except Exception as exc:  # noqa: BLE001 - a failing handler must not take the server down
            return Response(500, f"{type(exc).__name__}: {exc}\n".encode())

    def index(self) -> dict:
        return {"routes": sorted(f"{m} {p}  ({owner})" for (m, p), (_, owner) in self.routes.items())}


async def _read_request(reader: asyncio.StreamReader) -> Request | Response:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        return Response(413, b"request head too large\n")
    if len(head) > MAX_HEAD:
        return Response(413, b"request head too large\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return Response(400, b"bad request line\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    length = headers.get("content-length", "0") or "0"
    if not length.isdigit():
        return Response(400, b"bad content-length\n")
    length = int(length)
    if length > MAX_BODY:
        return Response(413, b"request body too large\n")
    body = await reader.readexactly(length) if length else b""
    url = urlsplit(parts[1])
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    return Request(parts[0].upper(), url.path or "/", query, headers, body)


def _encode(response: Response, head_only: bool = False) -> bytes:
    reason = REASONS.get(response.status, "OK")
    head = [f"HTTP/1.1 {response.status} {reason}", f"Content-Type: {response.content_type}",
            f"Content-Length: {len(response.body)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in response.headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else response.body)


async def apply(ctx, config):
    server = HttpServer(config["host"], config["port"])
    try:
        stop = await server.start()
    except OSError as exc:
        raise OSError(exc.errno, f"cannot listen on {config['host']}:{config['port']}: {exc.strerror}") from None
    ctx.effect(lambda: stop, "http.listen")
    ctx.provide("http", server)
    log = log_for(ctx, "http")
    if log is not None:
        log.info(f"listening on {server.url}")
