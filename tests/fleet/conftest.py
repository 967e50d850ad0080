"""A real etcd on loopback for the fleet tests: one for the session (each test its own prefix), and
a restartable one for the outage tests. dev.py installs Debian's etcd-server (TEST_TOOLS)."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.host.helpers import DSHCTL, make_home

ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha}
    - id: c
      name: ./plugins/boom.py
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class EtcdServer:
    def __init__(self, data_dir: Path, name: str = "t"):
        self.data_dir = data_dir
        self.name = name
        self.client_port, self.peer_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        self.peer = f"http://127.0.0.1:{self.peer_port}"
        self.cluster = f"{name}={self.peer}"
        self.proc: subprocess.Popen | None = None

    def spawn(self) -> None:
        self.log = open(self.data_dir.with_suffix(".log"), "ab")
        self.proc = subprocess.Popen(
            [shutil.which("etcd"), "--name", self.name, "--data-dir", str(self.data_dir),
             "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
             "--listen-peer-urls", self.peer, "--initial-advertise-peer-urls", self.peer,
             "--initial-cluster", self.cluster, "--initial-cluster-token", "dshctl-tests"],
            stdout=self.log, stderr=self.log)

    def start(self) -> "EtcdServer":
        self.spawn()
        return self.ready()

    def ready(self) -> "EtcdServer":
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.post(self.url + "/v3/kv/range", json={"key": "AA=="}, timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            assert self.proc.poll() is None, self.data_dir.with_suffix(".log").read_text()
            time.sleep(0.05)
        raise AssertionError("etcd did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


@pytest.fixture(scope="session")
def etcd(tmp_path_factory):
    server = EtcdServer(tmp_path_factory.mktemp("etcd") / "data").start()
    yield server
    server.stop()


@pytest.fixture
def own_etcd(tmp_path):
    server = EtcdServer(tmp_path / "etcd-data").start()
    yield server
    server.stop()


@pytest.fixture
def cluster(tmp_path):
    """Three members on loopback; ``url`` lists every client endpoint."""
    members = [EtcdServer(tmp_path / f"member{i}", f"m{i}") for i in range(3)]
    for m in members:
        m.cluster = ",".join(f"{x.name}={x.peer}" for x in members)
        m.spawn()
    for m in members:
        m.ready()
    yield members
    for m in members:
        m.stop()


@pytest.fixture
def prefix() -> str:
    return f"/t-{uuid.uuid4().hex[:10]}"


def home(root: Path, name: str, user: str | None = None) -> Path:
    return make_home(root / name, ROWS, user=user)


def dshctl(*args: str, home: Path | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    head = [DSHCTL] + (["--home", str(home), "--profile", "p"] if home else [])
    return subprocess.run(head + list(args), capture_output=True, text=True, timeout=timeout)


def status(etcd_url: str, prefix: str) -> tuple[int, dict]:
    result = dshctl("fleet", "status", "--etcd", etcd_url, "--prefix", prefix, "-f", "json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def wait_until(probe, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {value}")
