"""What a route handler gets (:class:`Request`) and may return (:class:`Response`, :class:`EventStream`,
an HTML ``str`` or any JSON-able value). Plain data: no web library is imported here."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator


@dataclass
class Request:
    method: str
    path: str
    query: dict
    headers: dict          # lower-case names
    body: bytes = b""

    def json(self) -> Any:
        """The body as JSON, or None when it is empty or not JSON."""
        try:
            return json.loads(self.body.decode("utf-8") or "null")
        except (UnicodeDecodeError, ValueError):
            return None


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict = field(default_factory=dict)

    @classmethod
    def of(cls, value) -> "Response | EventStream":
        if isinstance(value, (Response, EventStream)):
            return value
        if isinstance(value, str):
            return cls(200, value.encode(), "text/html; charset=utf-8")
        return cls.json(value)

    @classmethod
    def json(cls, value, status: int = 200) -> "Response":
        return cls(status, (json.dumps(value, indent=2, default=str) + "\n").encode(), "application/json")

    @classmethod
    def error(cls, status: int, message: str) -> "Response":
        return cls.json({"error": message}, status)


@dataclass(frozen=True)
class Tagged:
    """One Server-Sent Events message with an ``id:`` (the browser sends the last one back as
    ``Last-Event-ID`` when it reconnects); ``data`` as for :class:`EventStream`."""
    data: Any
    id: str


@dataclass
class EventStream:
    """A Server-Sent Events answer: every JSON value ``events`` yields is one ``data:`` message
    (``bytes`` are taken as JSON text already encoded: a feed shared by many clients encodes once;
    a :class:`Tagged` value adds the message's ``id:``).

    The server sends a comment every ``heartbeat_s`` so proxies and the browser keep the stream open,
    and stops iterating when the client goes away or the server shuts down."""
    events: AsyncIterator[Any]
    heartbeat_s: float = 15.0
