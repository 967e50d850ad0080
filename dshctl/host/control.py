"""The control channel: a Unix socket under the profile directory, JSON lines in and out.

Only the host's own user may drive it: the socket is created mode 0600 (inside a 0700 directory) and
every connection's peer uid is checked with SO_PEERCRED, so even a socket whose mode was loosened
refuses other users. Requests are ``{"op": "reload" | "status" | "ping"}``; each gets one response line
``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}`` (docs/host.md).
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

from dshctl.errors import DshctlError, Loc

MAX_SUN_PATH = 100  # sockaddr_un holds 108 bytes; keep a margin
MAX_LINE = 1024 * 1024

Handler = Callable[[dict], Awaitable[dict]]


class NoHost(DshctlError):
    """Nothing listens on the profile's control socket."""


@contextlib.contextmanager
def _addressable(path: Path) -> Iterator[str]:
    """``path`` itself, or an equivalent short ``/proc/self/fd/N/name`` when it is too long to bind."""
    if len(os.fsencode(str(path))) <= MAX_SUN_PATH:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


class ControlServer:
    def __init__(self, path: Path, handler: Handler, *, mode: int = 0o600):
        self.path = Path(path)
        self.handler = handler
        self.mode = mode  # tests loosen it to prove the SO_PEERCRED check stands on its own
        self._server: asyncio.base_events.Server | None = None
        self.refused = 0

    async def start(self) -> None:
        from .state_dir import ensure
        ensure(self.path.parent)
        os.chmod(self.path.parent, 0o700)
        if self.path.exists() or self.path.is_symlink():
            if _alive(self.path):
                raise DshctlError("a host is already running for this profile", loc=Loc(str(self.path)),
                                  hint="stop it first, or talk to it with `dshctl status` / `dshctl reload`")
            self.path.unlink()  # stale socket of a host that died
        old_umask = os.umask(0o177)  # the socket is born 0600: no window where others could connect
        try:
            with _addressable(self.path) as address:
                self._server = await asyncio.start_unix_server(self._serve, address, limit=MAX_LINE)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, self.mode)
        self._inode = self.path.stat().st_ino

    _inode: int | None = None   # of the socket file this server bound

    async def stop(self) -> None:
        """Close the server and remove its socket file: only ours, never another host's (a server
        that failed to start, or whose path was since re-bound, leaves the file alone)."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            if self._inode is not None and self.path.stat().st_ino == self._inode:
                self.path.unlink()
        self._inode = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            uid = peer_uid(writer.get_extra_info("socket"))
            if uid != os.getuid():
                self.refused += 1
                await _send(writer, {"ok": False, "error": f"refused: peer uid {uid} is not the host's uid "
                                                          f"{os.getuid()}"})
                return
            while line := await reader.readline():
                answer = await self._answer(line)
                if hasattr(answer, "__aiter__"):
                    await self._stream(answer, reader, writer)
                    return
                await _send(writer, answer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client went away (or sent garbage); the work it asked for is not affected
        finally:
            writer.close()

    async def _stream(self, answer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A streamed answer (``agent.run``): lines out as they come, the client's lines in to
        ``answer.incoming``; the client going away sets ``answer.closed``."""
        async def listen():
            try:
                while line := await reader.readline():
                    try:
                        answer.incoming.put_nowait(json.loads(line))
                    except ValueError:
                        continue
            except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                pass
            answer.closed.set()
        listener = asyncio.ensure_future(listen())
        try:
            async for item in answer:
                try:
                    await _send(writer, item)
                except (ConnectionError, RuntimeError):
                    answer.closed.set()    # keep draining: the turn ends as aborted, logged whole
        finally:
            listener.cancel()

    async def _answer(self, line: bytes) -> dict:
        try:
            request = json.loads(line)
        except ValueError:
            return {"ok": False, "error": "request is not a JSON line"}
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return {"ok": False, "error": 'request must be an object with an "op" string'}
        # Shielded: a client killed mid-request must not cancel a reload half-way.
        return await asyncio.shield(self.handler(request))


async def _send(writer: asyncio.StreamWriter, message: dict) -> None:
    writer.write(json.dumps(message, default=str).encode() + b"\n")
    await writer.drain()


def _alive(path: Path) -> bool:
    try:
        request(path, {"op": "ping"}, timeout=2)
        return True
    except NoHost:
        return False
    except DshctlError:
        return True  # something answers, even if it refuses us


def request(path: Path, payload: dict, *, timeout: float | None = None) -> dict[str, Any]:
    """Send one request and wait for its response (blocking). Raises :class:`NoHost`."""
    path = Path(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            with _addressable(path) as address:
                sock.connect(address)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError) as exc:
            raise NoHost("no host is running for this profile", loc=Loc(str(path)),
                         hint="start one with `dshctl host run`") from exc
        except PermissionError:
            raise DshctlError("permission denied on the host's control socket", loc=Loc(str(path)),
                              hint="only the user running the host can control it") from None
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        raise DshctlError("the host did not answer in time", loc=Loc(str(path)),
                          hint="see the host's log; it may be stuck in a plugin") from None
    except OSError as exc:
        if exc.errno in (errno.ECONNRESET, errno.EPIPE):
            raise NoHost("the host closed the connection", loc=Loc(str(path)),
                         hint="it may have shut down; check `dshctl status`") from None
        raise
    finally:
        sock.close()
    if not data:
        raise NoHost("the host closed the connection without an answer", loc=Loc(str(path)),
                     hint="it may have shut down; check `dshctl status`")
    response = json.loads(data)
    if not response.get("ok", False):
        error = str(response.get("error"))
        refused = error.startswith("refused")
        raise DshctlError(f"the host {'refused' if refused else 'failed'} the request: {error}",
                          loc=Loc(str(path)),
                          hint="run the command as the user that started the host" if refused
                          else "see the host's log for details")
    return response
