"""Control socket limits (issue 14): size, nesting, idle time, connection count. Real Unix sockets.

Every breach gets an error reply (or, for a connection over the limit, a reply and a close); none is
logged as an unhandled exception, and the host keeps answering.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path

from dshctl.host import control

from .helpers import WAIT_S, HostProcess, make_home, run_async

ROWS = """\
    - id: a
      name: ./plugins/svc.py
"""


async def echo(request: dict) -> dict:
    return {"ok": True, "echo": request}


async def serve(tmp_path: Path, **options) -> control.ControlServer:
    errors: list[str] = []
    server = control.ControlServer(tmp_path / ".dshctl" / "host.sock", echo, on_error=errors.append, **options)
    server.errors = errors
    await server.start()
    return server


async def ask(path: Path, data: bytes) -> dict | None:
    reader, writer = await asyncio.open_unix_connection(str(path), limit=4 * control.MAX_LINE)
    writer.write(data)
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), WAIT_S)
    writer.close()
    return json.loads(line) if line else None


@run_async()
async def test_deep_nesting_gets_an_error_reply_and_the_connection_goes_on(tmp_path):
    server = await serve(tmp_path)
    try:
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        for payload in (b"[" * 100_000 + b"\n", b'{"op": ' + b"[" * 40 + b"]" * 40 + b"}\n"):
            writer.write(payload)
            answer = json.loads(await asyncio.wait_for(reader.readline(), WAIT_S))
            assert answer == {"ok": False, "error": f"request nested deeper than {control.MAX_NESTING} levels"}
        writer.write(b'{"op": "ping", "x": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}\n')   # in a string
        assert json.loads(await reader.readline())["ok"] is True
        writer.close()
        assert server.errors == []
    finally:
        await server.stop()


@run_async()
async def test_a_request_over_the_size_limit_gets_an_error_reply(tmp_path):
    server = await serve(tmp_path)
    try:
        answer = await ask(server.path, b'{"op": "' + b"x" * (control.MAX_LINE + 10) + b'"}\n')
        assert answer["ok"] is False and "longer than 1,048,576 bytes" in answer["error"]
        assert (await ask(server.path, b'{"op": "ping"}\n'))["ok"] is True
        assert server.errors == []
    finally:
        await server.stop()


@run_async()
async def test_idle_connections_are_closed_and_their_number_is_bounded(tmp_path):
    server = await serve(tmp_path, idle_timeout=1.0, max_connections=16)
    try:
        clients = [await asyncio.open_unix_connection(str(server.path)) for _ in range(200)]
        answers = await asyncio.gather(*(asyncio.wait_for(r.readline(), WAIT_S) for r, _ in clients[16:]))
        assert all("too many connections" in json.loads(a)["error"] for a in answers)
        assert server.open <= 16
        # the first 16 are closed after a second of silence, with a reason
        idle = await asyncio.gather(*(asyncio.wait_for(r.readline(), WAIT_S) for r, _ in clients[:16]))
        assert all("no request for 1 s" in json.loads(a)["error"] for a in idle)
        deadline = time.monotonic() + WAIT_S
        while server.open and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert server.open == 0
        for _, writer in clients:
            writer.close()
        assert (await ask(server.path, b'{"op": "ping"}\n'))["ok"] is True   # and it still serves
        assert server.errors == []
    finally:
        await server.stop()


def _connect(path: Path) -> socket.socket:
    """A connection, waiting while the listen backlog is full (the host accepts and sheds them)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(WAIT_S)
        try:
            s.connect(str(path))
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_real_host_under_a_thousand_idle_connections_and_a_nesting_bomb(tmp_path):
    home = make_home(tmp_path, ROWS)
    with HostProcess(home, "p") as host:
        sock_path = home / "profiles" / "p" / ".dshctl" / "host.sock"
        before = _fds(host.proc.pid)
        clients = []
        for _ in range(1000):
            clients.append(_connect(sock_path))
        time.sleep(0.5)
        # the limit, plus the bounded room where connections past it may still ask for status
        assert _fds(host.proc.pid) <= before + control.MAX_CONNECTIONS + control.PRIORITY_ROOM + 8
        for s in clients:
            s.close()
        answer = control.request(sock_path, {"op": "ping"}, timeout=WAIT_S)
        assert answer["ok"] is True
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(WAIT_S)
            s.connect(str(sock_path))
            s.sendall(b"[" * 100_000 + b"\n")
            assert b"nested deeper" in s.makefile("rb").readline()
        assert host.status()["host"]["pid"] == host.proc.pid
    err = host.proc.stderr.read()
    assert "Traceback" not in err and "RecursionError" not in err, err
    assert not [e for e in host.seen if e["event"] in ("control/error", "runtime/log")]
