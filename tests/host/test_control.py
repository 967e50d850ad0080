"""The control socket: real Unix sockets, a real client process of another uid, real stale files."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from dshctl.errors import DshctlError
from dshctl.host import control

from .helpers import WAIT_S, run_async


async def echo(request: dict) -> dict:
    return {"ok": True, "echo": request}


def _client_as_nobody(sock: Path) -> dict:
    """Connect as uid 65534 from a separate process (setpriv changes the uid before exec)."""
    # The host answers a refused peer at once and hangs up, so the probe only reads.
    probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.settimeout(30)\ns.connect(sys.argv[1])\n"
             "print(s.makefile().readline())\n")
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                             "/usr/bin/python3", "-c", probe, str(sock)],
                            capture_output=True, text=True, timeout=2 * WAIT_S)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_so_peercred_refuses_another_uid_even_on_a_world_writable_socket():
    # Needs root and setpriv (util-linux) to start the client as `nobody`; CI runs as root.
    # A world-reachable directory (pytest's tmp dirs are 0700) and a socket mode loosened to 0666:
    # only the SO_PEERCRED check stands between `nobody` and the host.
    base = Path(tempfile.mkdtemp(prefix="dshctl-peercred-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        path = base / "state" / "host.sock"

        async def main():
            server = control.ControlServer(path, echo, mode=0o666)
            await server.start()
            os.chmod(path.parent, 0o755)
            try:
                answer = await asyncio.to_thread(_client_as_nobody, path)
                mine = await asyncio.to_thread(control.request, path, {"op": "status"})
            finally:
                await server.stop()
            return server.refused, answer, mine

        refused, answer, mine = asyncio.run(main())
        assert refused == 1
        assert answer == {"ok": False, "error": f"refused: peer uid 65534 is not the host's uid {os.getuid()}"}
        assert mine["echo"] == {"op": "status"}
    finally:
        shutil.rmtree(base)


@run_async()
async def test_socket_is_born_0600_in_a_0700_directory(tmp_path):
    path = tmp_path / "state" / "host.sock"
    server = control.ControlServer(path, echo)
    await server.start()
    try:
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.parent.stat().st_mode & 0o777 == 0o700
        assert (path.parent / ".gitignore").read_text().splitlines()[-1] == "*"
    finally:
        await server.stop()
    assert not path.exists()


@run_async()
async def test_protocol_errors_get_an_answer_and_the_connection_survives(tmp_path):
    path = tmp_path / "host.sock"
    server = control.ControlServer(path, echo)
    await server.start()
    try:
        reader, writer = await asyncio.open_unix_connection(str(path))
        for line, expected in ((b"not json\n", "request is not a JSON line"),
                               (b"[1, 2]\n", 'request must be an object with an "op" string')):
            writer.write(line)
            await writer.drain()
            assert json.loads(await reader.readline()) == {"ok": False, "error": expected}
        writer.write(b'{"op": "ping"}\n')
        await writer.drain()
        assert json.loads(await reader.readline())["echo"] == {"op": "ping"}
        writer.close()
    finally:
        await server.stop()


@run_async()
async def test_a_stale_socket_is_replaced_and_a_live_one_refused(tmp_path):
    path = tmp_path / "host.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()                         # a file nobody listens on: a host that died
    first = control.ControlServer(path, echo)
    await first.start()
    try:
        second = control.ControlServer(path, echo)
        with pytest.raises(DshctlError, match="a host is already running"):
            await second.start()
        answer = await asyncio.to_thread(control.request, path, {"op": "ping"})
        assert answer["ok"]
    finally:
        await first.stop()


@run_async()
async def test_paths_longer_than_sun_path_still_work(tmp_path):
    deep = tmp_path.joinpath(*["d" * 40] * 4) / "host.sock"
    assert len(str(deep)) > 108
    server = control.ControlServer(deep, echo)
    await server.start()
    try:
        answer = await asyncio.to_thread(control.request, deep, {"op": "ping"})
        assert answer["echo"] == {"op": "ping"}
    finally:
        await server.stop()


def test_no_host_is_a_distinct_error(tmp_path):
    with pytest.raises(control.NoHost):
        control.request(tmp_path / "host.sock", {"op": "ping"})
