"""HTTP/1.1 on one socket, as far as a registry client needs it: a GET out, a status line, headers
and a body framed by Content-Length, chunked encoding or the end of the connection.

Not ``http.client``: importing it (it parses headers with the ``email`` package and imports
``ssl``) costs ~20 ms of CPU, a tenth of a cold ``plugin add``. The same bounds as http.client:
lines up to 64 KiB, at most 100 headers; what breaks them, or HTTP, is a TransportError naming the
fault. Every socket read and write waits at most the read timeout and never past ``stop_at``.
"""
from __future__ import annotations

import socket
import time
from typing import Iterator

CHUNK = 64 * 1024
MAX_LINE = 64 * 1024
MAX_HEADERS = 100
_BAD_IN_HEADER = frozenset("\r\n\0")


class Timeout(Exception):
    """A read or connect waited past its timeout, or the request's deadline passed."""


class TransportError(Exception):
    """The connection failed or the answer broke HTTP; the name of the cause is the message."""


class Headers(dict):
    """Header names lowercased; the first of repeated headers wins (as http.client's ``get``)."""

    def get(self, name: str, default=None):
        return dict.get(self, name.lower(), default)


class Connection:
    def __init__(self, scheme: str, host: str, port: int, read_timeout: float):
        self.scheme, self.host, self.port, self.read_timeout = scheme, host, port, read_timeout
        self.stop_at: float | None = None
        self.sock: socket.socket | None = None
        self.used = False  # served a request before: the server may have closed it since
        self._buf = bytearray()

    def bounded(self, timeout: float) -> float:
        if self.stop_at is None:
            return timeout
        left = self.stop_at - time.monotonic()
        if left <= 0:
            raise Timeout("the request's deadline passed")
        return min(timeout, left)

    def connect(self, host: str, port: int) -> None:
        # an ASCII name as bytes: getaddrinfo would otherwise import the idna codec (~4 ms)
        sock = socket.create_connection((host.encode() if host.isascii() else host, port),
                                        self.bounded(min(self.read_timeout, 10.0)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock

    def send(self, data: bytes) -> None:
        self.sock.settimeout(self.bounded(self.read_timeout))
        self.sock.sendall(data)

    def _recv(self, size: int) -> bytes:
        self.sock.settimeout(self.bounded(self.read_timeout))
        return self.sock.recv(size)

    def read_some(self, size: int) -> bytes:
        """Up to ``size`` bytes: what is buffered, else one read from the socket (b"" at EOF)."""
        if self._buf:
            data = bytes(self._buf[:size])
            del self._buf[:size]
            return data
        return self._recv(min(size, CHUNK))

    def read_line(self) -> bytes:
        while True:
            end = self._buf.find(b"\n", 0, MAX_LINE + 1)
            if end >= 0:
                line = bytes(self._buf[:end + 1])
                del self._buf[:end + 1]
                return line
            if len(self._buf) > MAX_LINE:  # no newline within the limit
                raise TransportError("LineTooLong")
            data = self._recv(CHUNK)
            if not data:
                raise TransportError("RemoteDisconnected" if not self._buf else "IncompleteRead")
            self._buf += data

    def request(self, target: str, headers: dict[str, str]) -> None:
        if not target.isascii() or any(c <= " " or c == "\x7f" for c in target):
            raise TransportError("InvalidURL")  # a hostile tarball URL cannot split the request
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        lines = [f"GET {target} HTTP/1.1", f"Host: {host}" + (
            f":{self.port}" if self.port != default else "")]
        for name, value in headers.items():
            if _BAD_IN_HEADER & set(name + value) or not name or " " in name or ":" in name:
                raise TransportError("InvalidHeader")
            lines.append(f"{name}: {value}")
        try:
            head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        except UnicodeEncodeError:
            raise TransportError("InvalidHeader") from None
        self.send(head)

    def read_head(self) -> tuple[str, int, Headers]:
        """(HTTP version, status, headers) of the next answer."""
        line = self.read_line()
        parts = line.decode("latin-1").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit() or \
                len(parts[1]) != 3:
            raise TransportError("BadStatusLine")
        headers = Headers()
        last = None
        for _ in range(MAX_HEADERS + 1):
            raw = self.read_line()
            if raw in (b"\r\n", b"\n"):
                return parts[0], int(parts[1]), headers
            text = raw.decode("latin-1").rstrip("\r\n")
            if text[:1] in (" ", "\t") and last is not None:  # an obsolete folded line
                headers[last] += " " + text.strip()
                continue
            name, sep, value = text.partition(":")
            name = name.strip().lower()
            if not sep or not name or " " in name or "\t" in name:
                raise TransportError("InvalidHeader")
            if name not in headers:
                headers[name] = value.strip()
            last = name
        raise TransportError("TooManyHeaders")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self._buf.clear()


class Body:
    """How the answer's body is framed, and reading it to its end."""

    def __init__(self, conn: Connection, version: str, status: int, headers: Headers):
        self._conn = conn
        connection = (headers.get("connection") or "").lower()
        self.will_close = "close" in connection or version == "HTTP/1.0" and \
            "keep-alive" not in connection
        self.chunked = "chunked" in (headers.get("transfer-encoding") or "").lower()
        self.left: int | None = None  # bytes to come (framed by length), None: chunked or EOF
        if status in (204, 304) or 100 <= status < 200:
            self.left, self.chunked = 0, False
        elif not self.chunked:
            length = headers.get("content-length")
            if length is not None:
                values = {v.strip() for v in length.split(",")}
                if len(values) != 1 or not (v := next(iter(values))).isascii() or not v.isdigit():
                    raise TransportError("InvalidContentLength")
                self.left = int(values.pop())
            else:
                self.will_close = True  # the body ends with the connection
        self.done = self.left == 0

    def chunks(self) -> Iterator[bytes]:
        if self.chunked:
            yield from self._chunked()
        elif self.left is not None:
            while self.left > 0:
                data = self._conn.read_some(min(CHUNK, self.left))
                if not data:
                    raise TransportError("IncompleteRead")
                self.left -= len(data)
                yield data
        else:
            while data := self._conn.read_some(CHUNK):
                yield data
        self.done = True

    def _chunked(self) -> Iterator[bytes]:
        while True:
            line = self._conn.read_line().split(b";", 1)[0].strip()
            if not line or line.strip(b"0123456789abcdefABCDEF"):  # int() would take 0x, _, +
                raise TransportError("InvalidChunkLength")
            size = int(line, 16)
            if size == 0:
                while self._conn.read_line() not in (b"\r\n", b"\n"):
                    pass  # trailers: not used
                return
            while size > 0:
                data = self._conn.read_some(min(CHUNK, size))
                if not data:
                    raise TransportError("IncompleteRead")
                size -= len(data)
                yield data
            if self._conn.read_line() not in (b"\r\n", b"\n"):
                raise TransportError("InvalidChunk")
