"""A small HTTP/1.1 client for the registry over the standard library's ``http.client``.

Why not httpx: importing httpx and building a client cost 90–150 ms of CPU per run, ``http.client``
42–63 ms (docs/performance.md), and a registry needs little: GETs, keep-alive, redirects (done by
the caller), gzip. What it keeps from the httpx client it replaces:
- one pool of keep-alive connections per origin, shared by the fetch threads (at most 16 idle);
- a connect timeout (``min(timeout, 10 s)``) and a per-read timeout (``fetch-timeout``);
- a total deadline per request: every socket read and write waits at most until ``stop_at``, so a
  registry sending one byte a second is given up when the deadline passes (issue 28);
- TLS only for https URLs, with a context made on first use (certifi's CA bundle, or
  ``SSL_CERT_FILE``/``SSL_CERT_DIR``), and for https the proxy from ``HTTPS_PROXY``/``ALL_PROXY``
  unless ``NO_PROXY`` names the host, tunnelled with CONNECT; plain http never uses a proxy;
- bodies decoded from gzip/deflate in bounded steps, so the caller's size cap counts inflated
  bytes and a compression bomb is refused while it streams.
"""
from __future__ import annotations

import email.errors
import http.client
import io
import os
import re
import socket
import threading
import time
import zlib
from typing import Iterator
from urllib.parse import unquote, urlsplit

CHUNK = 64 * 1024
MAX_IDLE = 16
USER_AGENT = "dshctl (npm registry client)"


class Timeout(Exception):
    """A read or connect waited past its timeout, or the request's deadline passed."""


class TransportError(Exception):
    """The connection failed or the answer broke HTTP; the name of the cause is the message."""


class Refused(TransportError):
    """A request not sent: its URL or a header would break HTTP (never worth a retry)."""


class _DeadlineReader(io.RawIOBase):
    """Socket reads that each wait at most the read timeout and never past the deadline."""

    def __init__(self, sock: "_Socket"):
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        conn = self._sock.conn
        self._sock.raw.settimeout(conn.bounded(conn.read_timeout))
        return self._sock.raw.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock.file_closed()
        super().close()


class _Socket:
    """What ``http.client`` uses of a socket, with every operation bounded by the deadline.

    Like a real socket's ``makefile``, a file made from it keeps the socket open until the file
    is closed too: ``http.client`` closes the connection as soon as an answer says it will
    close, and hands the socket on to that answer, which still has its body to read."""

    def __init__(self, conn: "_Connection", raw: socket.socket):
        self.conn, self.raw = conn, raw
        self._files = 0
        self._closed = False

    def sendall(self, data) -> None:
        self.raw.settimeout(self.conn.bounded(self.conn.read_timeout))
        self.raw.sendall(data)

    def makefile(self, mode: str, *args, **kwargs):
        self._files += 1
        return io.BufferedReader(_DeadlineReader(self), CHUNK)

    def file_closed(self) -> None:
        self._files -= 1
        if self._closed and self._files == 0:
            self.raw.close()

    def close(self) -> None:
        self._closed = True
        if self._files == 0:
            self.raw.close()


class _Connection(http.client.HTTPConnection):
    def __init__(self, scheme: str, host: str, port: int, read_timeout: float,
                 proxy: tuple[str, int, dict[str, str]] | None):
        super().__init__(host, port)
        self.scheme, self.read_timeout, self.proxy = scheme, read_timeout, proxy
        self.stop_at: float | None = None
        self.used = False  # served a request before: may have been closed by the server

    def bounded(self, timeout: float) -> float:
        if self.stop_at is None:
            return timeout
        left = self.stop_at - time.monotonic()
        if left <= 0:
            raise Timeout("the request's deadline passed")
        return min(timeout, left)

    def connect(self) -> None:
        host, port = (self.proxy[0], self.proxy[1]) if self.proxy else (self.host, self.port)
        # an ASCII name as bytes: getaddrinfo would otherwise import the idna codec (~4 ms)
        raw = socket.create_connection((host.encode() if host.isascii() else host, port),
                                       self.bounded(min(self.read_timeout, 10.0)))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = _Socket(self, raw)
        if self.proxy:
            self._open_tunnel()
        if self.scheme == "https":
            raw.settimeout(self.bounded(self.read_timeout))
            self.sock.raw = tls_context().wrap_socket(raw, server_hostname=self.host)

    def _open_tunnel(self) -> None:
        """CONNECT host:port through the proxy, before TLS (http.client's own tunnel code
        reads through ``self.sock`` too, but names the proxy, not the registry, as the host)."""
        lines = [f"CONNECT {self.host}:{self.port} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in self.proxy[2].items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        answer = http.client.HTTPResponse(self.sock, method="CONNECT")
        try:
            answer.begin()
        finally:
            answer.close()  # its file only: the socket stays open for the tunnel
        if answer.status != 200:
            raise TransportError(f"ProxyRefused {answer.status}")
        # begin() read the headers through a buffered file that is dropped now: a proxy sends
        # nothing after them until the client speaks, so no byte of the tunnel is lost.



class Response:
    def __init__(self, pool: "Pool", key, conn: _Connection, answer: http.client.HTTPResponse):
        self._pool, self._key, self._conn, self._answer = pool, key, conn, answer
        self.status = answer.status
        self.headers = answer.headers  # case-insensitive .get()
        self._done = False

    def iter_bytes(self) -> Iterator[bytes]:
        """The body as it arrives, inflated when the registry compressed it."""
        inflate = _decoder(self.headers.get("content-encoding"))
        try:
            while chunk := self._answer.read1(CHUNK):
                if inflate is None:
                    yield chunk
                    continue
                data = inflate.decompress(chunk, CHUNK)
                while data:  # at most CHUNK inflated bytes at a time: a bomb is counted as it grows
                    yield data
                    data = inflate.decompress(inflate.unconsumed_tail, CHUNK)
            if self._answer.length:  # read1 ends quietly at a close before Content-Length
                raise http.client.IncompleteRead(b"", self._answer.length)
            if inflate is not None:
                if tail := inflate.flush():
                    yield tail
                if not inflate.eof:  # the compressed stream stops short of its end
                    raise zlib.error("truncated stream")
        except (Timeout, TransportError, OSError, http.client.HTTPException, zlib.error,
                ValueError) as exc:
            raise _translated(exc) from None
        self._done = True

    def close(self) -> None:
        answer = self._answer
        if not answer.chunked and answer.length is not None and answer.length <= CHUNK:
            try:  # a 304, a redirect, a refusal, or a body read to its end (read1 leaves the
                answer.read()  # answer open at length 0): the rest read, the connection kept
                self._done = True
            except Exception:
                self._done = False
        if self._done and not answer.will_close and answer.isclosed():
            self._pool._release(self._key, self._conn)
        else:  # half-read or closing: the connection cannot serve another
            answer.close()
            self._conn.close()

    def __enter__(self) -> "Response":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _decoder(encoding: str | None):
    encoding = (encoding or "").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped, as servers send it
    if encoding in ("", "identity"):
        return None
    raise TransportError(f"UnsupportedEncoding {encoding}")


class Pool:
    """Keep-alive connections per (scheme, host, port), safe to share between threads."""

    def __init__(self, read_timeout: float):
        self.read_timeout = read_timeout
        self._idle: dict[tuple, list[_Connection]] = {}
        self._lock = threading.Lock()

    def get(self, url: str, headers: dict[str, str], stop_at: float | None) -> Response:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"UnsupportedURL {scheme or '(no scheme)'}")
        key = (scheme, parts.hostname, parts.port or (443 if scheme == "https" else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = {"user-agent": USER_AGENT, "accept-encoding": "gzip, deflate", **headers}
        _refuse_hostile_request(parts.hostname, target, sent)
        while True:
            conn = self._take(key)
            conn.stop_at = stop_at
            reused = conn.used
            try:
                conn.request("GET", target, headers=sent)
                answer = conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                conn.close()
                if reused:
                    continue  # the server closed an idle keep-alive connection: open a new one
                raise TransportError(type(exc).__name__) from None
            except BaseException as exc:
                conn.close()
                raise _translated(exc) from None
            conn.used = True
            try:
                _check_answer_head(answer)
            except TransportError:
                answer.close()
                conn.close()
                raise
            return Response(self, key, conn, answer)

    def _take(self, key) -> _Connection:
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop()
        return _Connection(key[0], key[1], key[2], self.read_timeout,
                           _proxy_for(key[1]) if key[0] == "https" else None)

    def _release(self, key, conn: _Connection) -> None:
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < MAX_IDLE:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            conns = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for conn in conns:
            conn.close()


# RFC 9110: a field name is a token; a value has no control character but tab. http.client
# lets a name with a space through and leaves the rest to the moment it sends: checked first,
# so that a hostile URL or header (from a packument or .npmrc) never reaches the wire.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
_URL_PART = re.compile(r"[\x21-\x7e]+")  # visible ASCII: no space, no control, no non-ASCII
_FOLD = re.compile(r"\r?\n[ \t]+")


def _refuse_hostile_request(host: str, target: str, headers: dict[str, str]) -> None:
    if not _URL_PART.fullmatch(host) or not _URL_PART.fullmatch(target):
        raise Refused("InvalidURL")
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise Refused("InvalidHeader (a name that is no token)")
        if not _FIELD_VALUE.fullmatch(value):  # the value is never shown: it may be a token
            raise Refused(f"InvalidHeader {name}")


def _check_answer_head(answer: http.client.HTTPResponse) -> None:
    """What http.client accepts quietly in a head but a client must not (RFC 9112): a line that
    is no header, a Content-Length that is no number (http.client then reads to the close, so
    a cut answer would look whole); folded values are joined with a space as it requires."""
    headers = answer.headers
    if any(isinstance(d, (email.errors.MissingHeaderBodySeparatorDefect,
                          email.errors.FirstHeaderLineIsContinuationDefect))
           for d in headers.defects):
        raise TransportError("InvalidHeader")
    lengths = headers.get_all("content-length") or []
    if lengths and not answer.chunked:
        values = {v.strip() for length in lengths for v in length.split(",")}
        if len(values) != 1 or not all(v.isascii() and v.isdigit() for v in values):
            raise TransportError("InvalidContentLength")
    for name in {n for n, v in headers.items() if "\n" in v}:
        values = [_FOLD.sub(" ", v) for v in headers.get_all(name)]
        del headers[name]
        for value in values:
            headers[name] = value


def _translated(exc: BaseException) -> BaseException:
    """A socket, TLS, HTTP parsing or inflating failure as Timeout / TransportError named by
    its class (with http.client's text where the class alone says nothing); others unchanged."""
    if isinstance(exc, (Timeout, TransportError)):
        return exc
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return Timeout(str(exc) or "timed out")
    if isinstance(exc, zlib.error):
        return TransportError("DecodingError")
    if type(exc) is http.client.HTTPException:
        return TransportError(f"HTTPException {exc}")
    if isinstance(exc, (OSError, http.client.HTTPException, ValueError)):
        return TransportError(type(exc).__name__)
    return exc


_tls_lock = threading.Lock()
_tls = None


def tls_context():
    """Made once, on the first https request: loading a CA bundle costs ~100 ms of CPU."""
    global _tls
    with _tls_lock:
        if _tls is None:
            import ssl

            if os.environ.get("SSL_CERT_FILE"):
                _tls = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
            elif os.environ.get("SSL_CERT_DIR"):
                _tls = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
            else:
                try:
                    import certifi
                except ImportError:  # the system's store, as ssl knows it
                    _tls = ssl.create_default_context()
                else:
                    _tls = ssl.create_default_context(cafile=certifi.where())
        return _tls


def _env(*names: str) -> str:
    for name in names:
        value = os.environ.get(name.lower()) or os.environ.get(name.upper())
        if value:
            return value.strip()
    return ""


def _proxy_for(host: str) -> tuple[str, int, dict[str, str]] | None:
    """The https proxy for ``host`` from the environment, as httpx's ``trust_env`` read it."""
    if _bypassed(host, _env("no_proxy")):
        return None
    proxy = _env("https_proxy", "all_proxy")
    if not proxy:
        return None
    parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
    if parts.scheme != "http" or not parts.hostname:
        raise TransportError(f"UnsupportedProxy {parts.scheme}:// (only http:// proxies)")
    headers = {}
    if parts.username is not None:
        import base64

        cred = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(cred).decode()
    return parts.hostname, parts.port or 80, headers


def _bypassed(host: str, no_proxy: str) -> bool:
    host = host.lower().rstrip(".")
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        entry = entry.split("://", 1)[-1].split("/", 1)[0]
        if entry.startswith("[") and "]" in entry:
            entry = entry[1:entry.index("]")]
        elif entry.count(":") == 1:
            entry = entry.split(":", 1)[0]  # host:port: the port is not compared
        entry = entry.lstrip("*").lstrip(".")
        if entry and (host == entry or host.endswith("." + entry)):
            return True
    return False
