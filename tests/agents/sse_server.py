"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, speaking real HTTP/1.1 and SSE.

Each request to ``POST /v1/chat/completions`` takes the next scripted response:

    Sse(payloads, delay=0, stall_after=None, close_after=None)   # 200, text/event-stream, chunked
    Status(code, body=..., headers={...})                        # an error reply
    Silent()                                                     # the request is read, never answered

``Sse`` frames every payload as ``data: <payload>\\n\\n`` in its own HTTP chunk; ``stall_after=n``
stops sending (connection open) after n payloads, ``close_after=n`` drops the connection after n
payloads without finishing the chunked body. Requests are recorded (headers lower-cased, JSON body).
``route`` (a function of the recorded request, returning a reply or None) answers a request out of
script order — e.g. a side request a client makes concurrently, as dsh's session-title request.
The server runs its own event loop in a thread, so a test may drive the client with asyncio.run.
"""
from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field


@dataclass
class Sse:
    payloads: list[str]
    delay: float = 0.0
    stall_after: int | None = None
    close_after: int | None = None


@dataclass
class Silent:
    """Read the request, then never answer (not even the status line)."""


@dataclass
class Status:
    code: int
    body: str = '{"error": {"message": "scripted failure"}}'
    headers: dict = field(default_factory=dict)


def chunk(delta: dict | None = None, finish: str | None = None, usage: dict | None = None) -> str:
    """One ``chat.completion.chunk`` payload."""
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    out = {"id": "cmpl-1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    if usage is not None:
        out["usage"] = usage
        out["choices"] = []
    return json.dumps(out)


REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable"}


class SseServer:
    def __init__(self) -> None:
        self.script: list = []
        self.route = None                 # fn(request) -> reply | None, consulted before the script
        self.requests: list[dict] = []
        self.loop = asyncio.new_event_loop()
        self._server = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    # --- lifecycle -----------------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    def __enter__(self) -> "SseServer":
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        async def stop():
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- protocol ------------------------------------------------------------------------------

    async def _read_request(self, reader: asyncio.StreamReader) -> dict | None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return {"method": method, "path": path, "headers": headers, "body": json.loads(body or b"null")}

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    request = await self._read_request(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request["peer"] = writer.get_extra_info("peername")   # which connection carried it
                self.requests.append(request)
                reply = self.route(request) if self.route is not None else None
                if reply is None:
                    reply = self.script.pop(0) if self.script else Status(500, '{"error":{"message":"script empty"}}')
                if isinstance(reply, Silent):
                    await asyncio.sleep(3600)     # cancelled at exit
                keep = await (self._sse(writer, reply) if isinstance(reply, Sse) else self._status(writer, reply))
                if not keep:
                    return
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()

    async def _status(self, writer, reply: Status) -> bool:
        body = reply.body.encode()
        head = [f"HTTP/1.1 {reply.code} {REASONS.get(reply.code, 'Status')}", "Content-Type: application/json",
                f"Content-Length: {len(body)}"] + [f"{k}: {v}" for k, v in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        return True

    async def _sse(self, writer, reply: Sse) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        for n, payload in enumerate(reply.payloads):
            if reply.close_after is not None and n == reply.close_after:
                await writer.drain()
                writer.transport.abort()          # drop the connection: no terminating chunk
                return False
            if reply.stall_after is not None and n == reply.stall_after:
                await writer.drain()
                await asyncio.sleep(3600)         # silence with the connection open (cancelled at exit)
            data = f"data: {payload}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            await writer.drain()
            if reply.delay:
                await asyncio.sleep(reply.delay)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
