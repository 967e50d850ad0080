"""A real npm registry on 127.0.0.1 for the tests: packuments and tarballs the suite builds.

``Registry.add`` builds a real ``.tgz`` (``package/`` prefix, as ``npm pack`` makes) and its
packument entry with ``dist.integrity`` (sha512 SRI) and ``dist.shasum``. Misbehaviours are per
package name: ``status`` (404, 401, 500 a number of times, …), ``stall`` (no answer for a while),
``malformed`` (not JSON), ``token`` (401 without ``Authorization: Bearer <token>``).

Packuments carry the caching headers registry.npmjs.org sends (``Cache-Control: public,
max-age=300``, an ``ETag``, ``Last-Modified``) and a matching ``If-None-Match`` (or, without one,
an ``If-Modified-Since`` not older than the packument) gets ``304 Not Modified``; ``max_age``
changes the freshness (``None``: no Cache-Control at all), ``not_modified`` lists the 304s.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import tarfile
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


def entry_source(name: str, version: str, deps: list[str]) -> str:
    """CommonJS that loads every dependency: requiring it proves Node resolves the whole tree."""
    loads = ", ".join(f"{json.dumps(d)}: require({json.dumps(d)}).id" for d in deps)
    return (f"module.exports = {{ id: {json.dumps(name + '@' + version)}, deps: {{{loads}}} }};\n")


def make_tarball(files: dict[str, bytes | str], *, prefix: str = "package/",
                 extra: list[tarfile.TarInfo] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, data in sorted(files.items()):
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(prefix + rel)
            info.size = len(raw)
            info.mode = 0o644
            info.mtime = 1700000000
            tar.addfile(info, io.BytesIO(raw))
        for info in extra or []:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return buf.getvalue()


@dataclass
class Behaviour:
    status: int | None = None
    times: int = 10**9  # how many requests get ``status`` before the real answer
    stall: float = 0.0
    malformed: bool = False
    token: str | None = None
    huge: int = 0          # answer 200 with this many bytes (generated while sent, never held)
    no_length: bool = False  # ... without a content-length (chunked): only counting can stop it
    trickle: float = 0.0   # seconds between single bytes of the answer (a registry that trickles)
    truncate: bool = False  # announce the full length, send half, close
    only: str | None = None  # "tarball" or "packument": which answer huge/trickle/truncate spoil
    gzip: bool = False  # the packument sent with Content-Encoding: gzip
    pad: int = 0  # ... with a "pad" field of this many spaces (a gzip bomb when large)


@dataclass
class Registry:
    packuments: dict[str, dict] = field(default_factory=dict)
    tarballs: dict[str, bytes] = field(default_factory=dict)
    behaviour: dict[str, Behaviour] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    not_modified: list[str] = field(default_factory=list)
    max_age: int | None = 300
    url: str = ""
    changed: dict[str, float] = field(default_factory=dict)  # name -> time of its last change
    connections: int = 0  # TCP connections accepted (keep-alive shows as fewer than requests)
    gzipped: list[str] = field(default_factory=list)  # packuments sent compressed

    def add(self, name: str, version: str, *, deps: dict[str, str] | None = None,
            optional: dict[str, str] | None = None, peers: dict[str, str] | None = None,
            extra: dict | None = None, files: dict[str, str] | None = None,
            tarball: bytes | None = None, integrity: str | None = None, latest: bool = False,
            esm: bool = False) -> dict:
        deps = dict(deps or {})
        manifest = {"name": name, "version": version, "main": "index.js"}
        if deps:
            manifest["dependencies"] = deps
        if optional:
            manifest["optionalDependencies"] = optional
        if peers:
            manifest["peerDependencies"] = peers
        body = {"index.js": entry_source(name, version, sorted(deps))}  # optionals may be absent
        if esm:  # an exports map with import/require conditions
            manifest["exports"] = {".": {"import": "./index.mjs", "require": "./index.js"},
                                   "./package.json": "./package.json"}
            body["index.mjs"] = (f"import cjs from './index.js';\nexport const id = cjs.id;\n"
                                 "export default cjs;\n")
        manifest.update(extra or {})
        body.update(files or {})
        body["package.json"] = json.dumps(manifest, indent=2)
        data = tarball if tarball is not None else make_tarball(body)
        file = f"{name.split('/')[-1]}-{version}.tgz"
        path = f"/-/tarballs/{name}/{file}"
        self.tarballs[path] = data
        dist = {"tarball": self.url + path.lstrip("/"), "shasum": hashlib.sha1(data).hexdigest(),
                "integrity": integrity or "sha512-" + base64.b64encode(
                    hashlib.sha512(data).digest()).decode()}
        self.changed[name] = time.time()
        doc = self.packuments.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
        doc["versions"][version] = {**manifest, "dist": dist}
        tags = doc["dist-tags"]
        if latest or "latest" not in tags or _newer(version, tags["latest"]):
            tags["latest"] = version
        return manifest


def _newer(a: str, b: str) -> bool:
    from dshctl.bundles.semver import Version

    return Version.parse(a).key() > Version.parse(b).key()


def _handler(reg: Registry):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def setup(self):
            reg.connections += 1
            super().setup()  # headers and body are two writes: without this, Nagle + delayed ACK
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # add 40 ms

        def _send(self, status: int, body: bytes, ctype: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def _packument(self, path: str, doc: dict) -> None:
            body = json.dumps(doc).encode()
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            changed = int(reg.changed.get(doc["name"], 0))
            headers = {"etag": etag, "last-modified": formatdate(changed, usegmt=True),
                       "vary": "accept-encoding, accept"}
            if reg.max_age is not None:
                headers["cache-control"] = f"public, max-age={reg.max_age}"
            match = self.headers.get("if-none-match")
            since = self.headers.get("if-modified-since")
            if match is not None:
                fresh = etag in [t.strip() for t in match.split(",")]
            else:
                try:
                    fresh = since is not None and parsedate_to_datetime(since).timestamp() >= changed
                except (TypeError, ValueError):
                    fresh = False
            if fresh:
                reg.not_modified.append(path)
                self.send_response(304)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                return
            self._send(200, body, "application/vnd.npm.install-v1+json", headers)

        def _gzipped(self, path: str, doc: dict, pad: int) -> None:
            import gzip

            body = json.dumps({**doc, "pad": " " * pad} if pad else doc).encode()
            reg.gzipped.append(path)
            self._send(200, gzip.compress(body, 6), "application/json",
                       {"content-encoding": "gzip"})

        def _misbehave(self, b: Behaviour, tar: bool, path: str, name: str) -> None:
            real = reg.tarballs.get(path) if tar else json.dumps(reg.packuments.get(name)).encode()
            if b.huge:
                head = b"" if tar else b'{"versions": {}, "pad": "'
                tail = b"" if tar else b'"}'
                size = b.huge
            else:
                head, tail, size = real or b"{}", b"", 0
            total = len(head) + size + len(tail)
            self.send_response(200)
            self.send_header("content-type", "application/octet-stream" if tar else "application/json")
            if b.no_length:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("content-length", str(total))
            self.end_headers()
            try:
                if b.truncate:
                    self.wfile.write(head[:len(head) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if b.trickle:
                    deadline = time.monotonic() + 30  # bounded: the client gives up far earlier
                    for i in range(len(head)):
                        if time.monotonic() > deadline:
                            break
                        self._out(head[i:i + 1], b.no_length)
                        time.sleep(b.trickle)
                    self.close_connection = True
                    return
                self._out(head, b.no_length)
                block = b"x" * (1 << 20)
                left = size
                while left > 0:
                    self._out(block[:min(left, len(block))], b.no_length)
                    left -= len(block)
                self._out(tail, b.no_length)
                if b.no_length:
                    self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client refused it: that is the point

        def _out(self, data: bytes, chunked: bool) -> None:
            if not data:
                return
            if chunked:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            else:
                self.wfile.write(data)
            self.wfile.flush()

        def do_GET(self):  # noqa: N802 - http.server's name
            path = unquote(self.path.split("?")[0])
            reg.requests.append(path)
            tar = path.startswith("/-/tarballs/")
            name = path[len("/-/tarballs/"):].rsplit("/", 1)[0] if tar else path.strip("/")
            name = name.split("/", 1)[1] if name.startswith("private/") else name
            b = reg.behaviour.get(name)
            if b is not None:
                if b.stall:
                    time.sleep(b.stall)  # bounded: the test sets a few seconds at most
                if b.token and self.headers.get("authorization") != f"Bearer {b.token}":
                    return self._send(401, b'{"error":"unauthorized"}')
                if b.status and b.times > 0:
                    b.times -= 1
                    return self._send(b.status, b'{"error":"injected"}')
                if b.malformed and not tar:
                    return self._send(200, b'{"versions": [not json')
                if b.gzip and not tar and name in reg.packuments:
                    return self._gzipped(path, reg.packuments[name], b.pad)
                spoil = b.only is None or b.only == ("tarball" if tar else "packument")
                if spoil and (b.huge or b.trickle or b.truncate):
                    return self._misbehave(b, tar, path, name)
            if tar:
                data = reg.tarballs.get(path)
                if data is None:
                    return self._send(404, b"{}")
                return self._send(200, data, "application/octet-stream")
            doc = reg.packuments.get(name)
            if doc is None:
                return self._send(404, b'{"error":"not found"}')
            return self._packument(path, doc)

    return Handler


class _Listener(ThreadingHTTPServer):
    # socketserver's default backlog of 5 drops the SYNs of a client opening more connections at
    # once (dshctl and pnpm both open 8-16); each drop is a 1 s TCP retransmit. A real registry
    # listens with a large backlog.
    request_queue_size = 128


class Server:
    """Serves ``registry`` on 127.0.0.1 from a thread until ``close``."""

    def __init__(self, registry: Registry, tls: tuple[str, str] | None = None):
        """``tls``: (certificate, key) files: serve https as ``localhost`` (the handshake runs in
        the handler's thread, so a client that never finishes it holds no other)."""
        self.httpd = _Listener(("127.0.0.1", 0), _handler(registry))
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        registry.url = f"http://127.0.0.1:{port}/"
        if tls:
            import ssl

            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True,
                                                do_handshake_on_connect=False)
            registry.url = f"https://localhost:{port}/"
        self.registry = registry
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
