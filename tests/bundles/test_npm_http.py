"""The registry client (npm/http_pool.py, the standard library's http.client): keep-alive, gzip,
https with certificate checks, and an https registry reached through a CONNECT proxy from the
environment — against real servers on 127.0.0.1."""
from __future__ import annotations

import base64
import socket
import subprocess
import threading

import pytest

from tests.host.helpers import DSHCTL

from .conftest import npm_bundle
from .npm_registry import Behaviour, Registry, Server


def dshctl(*args):
    proc = subprocess.run([DSHCTL, *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr


def test_a_cold_add_reuses_its_connections(home, repos, npm_env):
    for i in range(8):
        npm_env.add(f"ka-{i}", "1.0.0", deps={f"ka-{i + 1}": "^1.0.0"} if i < 7 else None)
    src = npm_bundle(repos, "dsh-keepalive", {f"ka-{i}": "^1.0.0" for i in range(0, 8, 2)})
    npm_env.requests.clear()
    before = npm_env.connections
    code, err = dshctl("plugin", "add", src.url)
    assert code == 0, err
    opened = npm_env.connections - before
    assert len(npm_env.requests) == 16  # 8 packuments, 8 tarballs …
    assert 1 <= opened < 16, f"{opened} connections for 16 requests"  # … over kept-alive ones


def test_a_gzip_packument_is_inflated_and_a_gzip_bomb_refused_at_the_cap(home, repos, npm_env):
    npm_env.add("zipped", "1.0.0")
    npm_env.behaviour["zipped"] = Behaviour(gzip=True)
    src = npm_bundle(repos, "dsh-zipped", {"zipped": "^1.0.0"})
    code, err = dshctl("plugin", "add", src.url)
    assert code == 0, err
    assert npm_env.gzipped == ["/zipped"]
    assert (home / "profiles/web/node_modules/dsh-zipped/node_modules/zipped/package.json").exists()
    npm_env.add("bomb", "1.0.0")
    npm_env.behaviour["bomb"] = Behaviour(gzip=True, pad=24 * 1024 * 1024)  # ~24 KB on the wire
    src = npm_bundle(repos, "dsh-bomb", {"bomb": "^1.0.0"})
    code, err = dshctl("plugin", "add", src.url, "--profile", "other", "--max-packument-mb", "2")
    assert code == 1, err
    assert "bomb" in err and "larger than the limit of 2 MB" in err and "--max-packument-mb" in err


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for ``localhost``, made by the openssl command."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


class ConnectProxy:
    """An HTTP proxy that only tunnels (CONNECT), recording each request head."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.heads: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            data = client.recv(4096)
            if not data:
                return client.close()
            head += data
        text = head.decode("latin-1")
        self.heads.append(text)
        host, port = text.split()[1].rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def tls_registry(certificate, monkeypatch, npm_env):
    reg = Registry()
    server = Server(reg, tls=certificate)
    reg.add("tls-leaf", "1.0.0")
    monkeypatch.setenv("npm_config_registry", reg.url)
    for key in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
                "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(key, raising=False)
    yield reg
    server.close()


def test_an_https_registry_is_verified_and_reached_through_the_proxy_in_the_environment(
        home, repos, tls_registry, certificate, monkeypatch):
    src = npm_bundle(repos, "dsh-tls", {"tls-leaf": "^1.0.0"})
    code, err = dshctl("plugin", "add", src.url)  # a certificate no CA bundle vouches for
    assert code == 1 and "cannot reach the registry https://localhost:" in err, err
    assert "SSLCertVerificationError" in err and "Traceback" not in err
    assert tls_registry.requests == []
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    proxy = ConnectProxy()
    try:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", "http://u%40x:p%3Aw@"))
        code, err = dshctl("plugin", "add", src.url)
        assert code == 0, err
        assert sorted(tls_registry.requests) == ["/-/tarballs/tls-leaf/tls-leaf-1.0.0.tgz",
                                                 "/tls-leaf"]
        port = tls_registry.url.rsplit(":", 1)[1].rstrip("/")
        assert proxy.heads and all(h.startswith(f"CONNECT localhost:{port} HTTP/1.1\r\n")
                                   for h in proxy.heads)
        auth = "Basic " + base64.b64encode(b"u@x:p:w").decode()
        assert all(f"Proxy-Authorization: {auth}" in h for h in proxy.heads)
        tunnels = len(proxy.heads)
        monkeypatch.setenv("NO_PROXY", "example.org, .localhost")  # a suffix names it too
        monkeypatch.setenv("DSH_HOME", str(home.parent / "second-home"))  # nothing cached there
        tls_registry.requests.clear()
        code, err = dshctl("plugin", "add", src.url)
        assert code == 0, err
        assert len(tls_registry.requests) == 2 and len(proxy.heads) == tunnels  # proxy bypassed
    finally:
        proxy.close()
