"""A small HTTP/1.1 client for the registry: a keep-alive pool over http_wire.py's connections.

Why not httpx: importing httpx and building a client cost 90–150 ms of CPU per run, and even the
standard library's ``http.client`` ~20 ms more than this (docs/performance.md); a registry needs
little: GETs, keep-alive, redirects (done by the caller), gzip. What it keeps from httpx:
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

import os
import socket
import threading
import zlib
from typing import Iterator
from urllib.parse import unquote, urlsplit

from dshctl.bundles.npm.http_wire import CHUNK, Body, Connection, Timeout, TransportError

__all__ = ["Pool", "Response", "Timeout", "TransportError"]
MAX_IDLE = 16
USER_AGENT = "dshctl (npm registry client)"


def _open(conn: Connection, proxy: tuple[str, int, dict[str, str]] | None) -> None:
    """Connect (through the proxy's CONNECT tunnel when there is one), then TLS for https."""
    if proxy:
        conn.connect(proxy[0], proxy[1])
        lines = [f"CONNECT {conn.host}:{conn.port} HTTP/1.1", f"Host: {conn.host}:{conn.port}"]
        lines += [f"{k}: {v}" for k, v in proxy[2].items()]
        conn.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        _version, status, _headers = conn.read_head()
        if status != 200:
            raise TransportError(f"ProxyRefused {status}")
    else:
        conn.connect(conn.host, conn.port)
    if conn.scheme == "https":
        conn.sock.settimeout(conn.bounded(conn.read_timeout))
        conn.sock = tls_context().wrap_socket(conn.sock, server_hostname=conn.host)


class Response:
    def __init__(self, pool: "Pool", key, conn: Connection, status: int, headers, body: Body):
        self._pool, self._key, self._conn, self._body = pool, key, conn, body
        self.status, self.headers = status, headers  # headers: case-insensitive .get()

    def iter_bytes(self) -> Iterator[bytes]:
        """The body as it arrives, inflated when the registry compressed it."""
        inflate = _decoder(self.headers.get("content-encoding"))
        try:
            for chunk in self._body.chunks():
                if inflate is None:
                    yield chunk
                    continue
                data = inflate.decompress(chunk, CHUNK)
                while data:  # at most CHUNK inflated bytes at a time: a bomb is counted as it grows
                    yield data
                    data = inflate.decompress(inflate.unconsumed_tail, CHUNK)
            if inflate is not None and (tail := inflate.flush()):
                yield tail
        except (Timeout, TransportError, OSError, zlib.error, ValueError) as exc:
            self._body.done = False
            raise _translated(exc) from None

    def close(self) -> None:
        body = self._body
        if not body.done and not body.chunked and body.left is not None and body.left <= CHUNK:
            try:  # a redirect or a refusal: its small body read, the connection kept
                for _ in body.chunks():
                    pass
            except Exception:
                body.done = False
        if body.done and not body.will_close:
            self._pool._release(self._key, self._conn)
        else:
            self._conn.close()  # half-read or closing: the connection cannot serve another

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
        self._idle: dict[tuple, list[Connection]] = {}
        self._lock = threading.Lock()

    def get(self, url: str, headers: dict[str, str], stop_at: float | None) -> Response:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"UnsupportedURL {scheme or '(no scheme)'}")
        key = (scheme, parts.hostname, parts.port or (443 if scheme == "https" else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = {"user-agent": USER_AGENT, "accept-encoding": "gzip, deflate", **headers}
        while True:
            conn, proxy = self._take(key)
            conn.stop_at = stop_at
            reused = conn.used
            try:
                if conn.sock is None:
                    _open(conn, proxy)
                conn.request(target, sent)
                version, status, answer = conn.read_head()
                while 100 <= status < 200 and status != 101:  # 100 Continue and the like
                    version, status, answer = conn.read_head()
                body = Body(conn, version, status, answer)
            except (BrokenPipeError, ConnectionResetError, TransportError) as exc:
                conn.close()
                if reused and (not isinstance(exc, TransportError) or
                               str(exc) == "RemoteDisconnected"):
                    continue  # the server closed an idle keep-alive connection: open a new one
                raise _translated(exc) from None
            except BaseException as exc:
                conn.close()
                raise _translated(exc) from None
            conn.used = True
            return Response(self, key, conn, status, answer, body)

    def _take(self, key) -> tuple[Connection, tuple | None]:
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop(), None
        return Connection(key[0], key[1], key[2], self.read_timeout), \
            _proxy_for(key[1]) if key[0] == "https" else None

    def _release(self, key, conn: Connection) -> None:
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


def _translated(exc: BaseException) -> BaseException:
    """A socket, TLS or HTTP parsing failure as Timeout / TransportError; others unchanged."""
    if isinstance(exc, (Timeout, TransportError)):
        return exc
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return Timeout(str(exc) or "timed out")
    if isinstance(exc, zlib.error):
        return TransportError("DecodingError")
    if isinstance(exc, (OSError, ValueError)):
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
