"""The registry client (npm/http_pool.py over http.client) against a raw socket server on
127.0.0.1 that sends exactly the bytes a test gives, in the pieces it gives: chunked and
length-framed bodies (a property over random bodies and splits), keep-alive, answers that break
HTTP (named as http.client names the fault, or by the check http_pool adds where http.client
accepts them quietly), and requests refused before anything is sent."""
from __future__ import annotations

import gzip
import socket
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.bundles.npm.config import Config
from dshctl.bundles.npm.http_pool import Pool, Refused, Timeout, TransportError
from dshctl.bundles.npm.registry import FetchFailed
from dshctl.bundles.npm.registry import Registry as NpmRegistry


class RawServer:
    """Each connection: read request heads, answer each with the next queued list of pieces."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/"
        self.answers: list[list[bytes | float]] = []  # a float: a pause of that many seconds
        self.heads: list[bytes] = []
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        with conn:
            while self.answers:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                self.heads.append(head)
                for piece in self.answers.pop(0):
                    if isinstance(piece, float):
                        time.sleep(piece)
                        continue
                    try:
                        conn.sendall(piece)
                    except OSError:
                        return
                    time.sleep(0.0005)  # separate segments: the parser sees partial lines

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def raw():
    server = RawServer()
    yield server
    server.close()


def fetch(pool: Pool, url: str) -> tuple[int, bytes]:
    with pool.get(url, {"accept": "*/*"}, time.monotonic() + 5) as resp:
        return resp.status, b"".join(resp.iter_bytes())


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:]) if b > a]


def chunked(body: bytes, sizes: list[int]) -> bytes:
    out, i = b"", 0
    for size in sizes + [len(body)]:
        piece = body[i:i + max(1, size)]
        if not piece:
            break
        out += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
        i += len(piece)
    return out + b"0\r\nx-trailer: t\r\n\r\n"


@settings(max_examples=40, deadline=None)
@given(body=st.binary(max_size=3000), sizes=st.lists(st.integers(1, 700), max_size=8),
       cuts=st.lists(st.integers(0, 10_000), max_size=12), zipped=st.booleans())
def test_any_body_in_any_pieces_arrives_whole_and_the_connection_is_reused(body, sizes, cuts,
                                                                           zipped):
    server = RawServer()
    pool = Pool(5)
    try:
        wire = gzip.compress(body) if zipped else body
        enc = b"content-encoding: gzip\r\n" if zipped else b""
        by_length = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n%s\r\n" % (len(wire), enc) + wire
        by_chunks = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n%s\r\n" % enc + \
            chunked(wire, sizes)
        server.answers = [split(by_length, cuts), split(by_chunks, cuts[::-1])]
        assert fetch(pool, server.url + "a") == (200, body)
        assert fetch(pool, server.url + "b") == (200, body)
        assert server.connections == 1
    finally:
        pool.close()
        server.close()


@pytest.mark.parametrize("answer, fault", [
    (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", "IncompleteRead"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
     "IncompleteRead"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
     "IncompleteRead"),
    (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel", "IncompleteRead"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\nab", "InvalidContentLength"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", "InvalidContentLength"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: \xb2\r\n\r\n", "InvalidContentLength"),
    (b"ICY 200 OK\r\n\r\n", "BadStatusLine"),
    (b"HTTP/1.1 2000 OK\r\n\r\n", "BadStatusLine"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "InvalidHeader"),
    (b"HTTP/1.1 200 OK\r\n" + b"x-a: b\r\n" * 101 + b"\r\n",
     "HTTPException got more than 100 headers"),
    (b"HTTP/1.1 200 OK\r\n\tfolded: first\r\n\r\n", "InvalidHeader"),
    (b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab",
     "InvalidContentLength"),
    (b"HTTP/1.1 200 OK\r\nx-long: " + b"a" * 70_000 + b"\r\n\r\n", "LineTooLong"),
    (b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 4\r\n\r\nnope",
     "DecodingError"),
    (b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 12\r\n\r\n" +
     gzip.compress(b"a" * 1000, mtime=0)[:12], "DecodingError"),  # a gzip stream cut short
    (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 10\r\n\r\nabc",
     "IncompleteRead"),
    (b"HTTP/1.1 200 OK\r\ncontent-encoding: br\r\ncontent-length: 0\r\n\r\n",
     "UnsupportedEncoding br"),
    (b"", "RemoteDisconnected"),
])
def test_an_answer_that_breaks_http_is_a_transport_error_naming_the_fault(raw, answer, fault):
    raw.answers = [[answer]]
    pool = Pool(5)
    try:
        with pytest.raises(TransportError) as err:
            fetch(pool, raw.url + "x")
        assert str(err.value) == fault
    finally:
        pool.close()


def test_a_chunk_size_with_a_0x_prefix_is_read_as_http_client_reads_it(raw):
    """http.client reads a chunk size with ``int(line, 16)``, which takes a ``0x`` prefix: not
    RFC 9112's 1*HEXDIG, but the size is the same number either way, so a client that forwards
    nothing reads the body it was given; refusing it would mean replacing http.client's parser."""
    raw.answers = [[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
                    b"0x5\r\nhello\r\n0\r\n\r\n"]]
    pool = Pool(5)
    try:
        assert fetch(pool, raw.url + "x") == (200, b"hello")
    finally:
        pool.close()


def test_an_answer_that_closes_the_connection_is_read_to_its_end(raw):
    """http.client closes the connection once an answer says it will close, and the answer keeps
    reading from the socket: that socket must stay open until the body is read."""
    body = bytes(range(256)) * 600  # several reads of CHUNK
    raw.answers = [[b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
                    % len(body), body[:1000], body[1000:]],
                   [b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb"]]
    pool = Pool(5)
    try:
        assert fetch(pool, raw.url + "a") == (200, body)
        assert fetch(pool, raw.url + "b") == (200, b"b")  # on a new connection
        assert raw.connections == 2
    finally:
        pool.close()


def test_a_body_read_to_the_close_without_content_length_is_whole(raw):
    raw.answers = [[b"HTTP/1.0 200 OK\r\n\r\n", b"all ", b"of it"]]
    pool = Pool(5)
    try:
        assert fetch(pool, raw.url + "x") == (200, b"all of it")
    finally:
        pool.close()


def test_folded_repeated_and_informational_headers(raw):
    raw.answers = [[b"HTTP/1.1 100 Continue\r\n\r\n",
                    b"HTTP/1.1 200 OK\r\nETag: \"a\"\r\netag: \"b\"\r\nX-Folded: one\r\n\t two\r\n"
                    b"Content-Length: 2\r\n\r\nok"]]
    pool = Pool(5)
    try:
        with pool.get(raw.url + "x", {}, None) as resp:
            assert resp.status == 200 and b"".join(resp.iter_bytes()) == b"ok"
            assert resp.headers.get("etag") == '"a"' and resp.headers.get("ETAG") == '"a"'
            assert resp.headers.get("x-folded") == "one two"
    finally:
        pool.close()


NO_TOKEN = "InvalidHeader (a name that is no token)"


@pytest.mark.parametrize("url, headers, fault", [
    ("x y", {}, "InvalidURL"), ("x\r\nInjected: 1", {}, "InvalidURL"),
    ("caf\u00e9", {}, "InvalidURL"), ("x?q=\x00", {}, "InvalidURL"),
    ("x", {"authorization": "Bearer t\r\nInjected: 1"}, "InvalidHeader authorization"),
    ("x", {"x-a": "one\ntwo"}, "InvalidHeader x-a"), ("x", {"x-a": "nul\x00"}, "InvalidHeader x-a"),
    ("x", {"bad name": "v"}, NO_TOKEN), ("x", {"": "v"}, NO_TOKEN), ("x", {"x-a:": "v"}, NO_TOKEN),
])
def test_a_hostile_url_or_header_value_never_reaches_the_wire(raw, url, headers, fault):
    raw.answers = [[b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"]]
    pool = Pool(5)
    try:
        with pytest.raises(Refused) as err:
            pool.get(raw.url + url, headers, None)
        assert str(err.value) == fault  # the value is never shown: it may carry a token
        time.sleep(0.05)
        assert raw.heads == [] and raw.connections == 0  # not even a connection was opened
    finally:
        pool.close()


def test_a_refused_request_fails_at_once_with_one_line_naming_it(raw):
    """No retry: the same request would be refused again."""
    registry = NpmRegistry(Config(registry=raw.url, retries=3))
    try:
        with pytest.raises(FetchFailed) as err:
            registry.tarball(raw.url + "pkg/-/bad name.tgz")
        assert str(err.value).startswith(f"not sent to the registry {raw.url.rstrip('/')}: "
                                         "InvalidURL")
        assert registry.requests == 1 and raw.connections == 0
    finally:
        registry.close()


def test_a_server_that_closes_an_idle_connection_costs_a_new_one_not_a_failure(raw):
    raw.answers = [[b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na"]]
    pool = Pool(5)
    try:
        assert fetch(pool, raw.url + "a") == (200, b"a")  # the server then closes the connection
        time.sleep(0.05)
        raw.answers = [[b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb"]]
        assert fetch(pool, raw.url + "b") == (200, b"b")
        assert raw.connections == 2
    finally:
        pool.close()


def test_the_deadline_ends_a_trickle_of_header_bytes(raw):
    raw.answers = [[b"HTTP/1.1 200 OK\r\nx-slow: "] + [0.1, b"x"] * 30]  # 3 s of one header
    pool = Pool(read_timeout=1.0)
    start = time.monotonic()
    try:
        with pytest.raises(Timeout):
            with pool.get(raw.url + "x", {}, time.monotonic() + 0.5):
                pass
    finally:
        pool.close()
    assert time.monotonic() - start < 2
