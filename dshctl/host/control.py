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
import itertools
import json
import os
import re
import socket
import struct
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

from dshctl.errors import DshctlError, Loc

MAX_SUN_PATH = 100  # sockaddr_un holds 108 bytes; keep a margin
# Limits on what a client may send (docs/host.md, "Control socket limits"): every breach gets an
# error reply and, where the connection cannot go on, a close. None of them is logged as a failure.
MAX_LINE = 1024 * 1024      # bytes in one request line
MAX_EVENT_LINE = 64 * 1024 * 1024  # bytes in one line of a streamed answer (an agent.run event)
MAX_NESTING = 32            # [ and { levels in one request (json.loads recurses: RecursionError)
IDLE_TIMEOUT_S = 60.0       # a connection that sends no complete request for this long is closed
MAX_CONNECTIONS = 64        # open at once; more are answered with an error and closed
# ... except that a connection past the limit may still ask for one of these (issue 28: 64 idle
# connections locked status and reload out for 60 s): it has PRIORITY_GRACE_S to send its line,
# and at most PRIORITY_ROOM such connections wait at once.
PRIORITY_OPS = frozenset({"status", "ping", "reload", "confirm"})
PRIORITY_ROOM = 16
PRIORITY_GRACE_S = 1.0   # a status client sends its line at once
LINGER_S = 2.0           # seconds a finished stream waits for the client to close its side

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
    def __init__(self, path: Path, handler: Handler, *, mode: int = 0o600,
                 idle_timeout: float = IDLE_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS,
                 max_event_line: int = MAX_EVENT_LINE, on_error: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.handler = handler
        self.mode = mode  # tests loosen it to prove the SO_PEERCRED check stands on its own
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self.max_event_line = max_event_line
        self.on_error = on_error   # a bug of ours while serving a client: logged, the host goes on
        self._server: asyncio.base_events.Server | None = None
        self.refused = 0
        self.open = 0              # connections being served now
        self.waiting_room = 0      # connections past the limit, given a chance to ask for status

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
        if self.open >= self.max_connections:
            await self._over_limit(reader, writer)
            return
        self.open += 1
        try:
            if not await self._peer_ok(writer):
                return
            while True:
                line, error = await self._read_request(reader)
                if error is not None:
                    await _send(writer, {"ok": False, "error": error})
                    return
                if not line:
                    return
                answer = await self._answer(line)
                if hasattr(answer, "__aiter__"):   # a streamed answer (agent.run)
                    await self._stream(answer, reader, writer)
                    return
                await _send(writer, answer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the client went away; the work it asked for is not affected
        except Exception as exc:  # noqa: BLE001 - a bug of ours: say so once, keep serving others
            if self.on_error is not None:
                self.on_error(f"control connection: {type(exc).__name__}: {exc}")
        finally:
            self.open -= 1
            writer.close()

    def _too_many(self) -> dict:
        return {"ok": False, "error": f"too many connections (the limit is {self.max_connections}); "
                                      "try again later"}

    async def _peer_ok(self, writer: asyncio.StreamWriter) -> bool:
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid != os.getuid():
            self.refused += 1
            await _send(writer, {"ok": False, "error": f"refused: peer uid {uid} is not the host's uid "
                                                      f"{os.getuid()}"})
            return False
        return True

    async def _over_limit(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Past the connection limit: one quick status/ping/reload/confirm request is still
        answered (the room for it is bounded); anything else gets the refusal."""
        waiting = self.waiting_room < PRIORITY_ROOM
        if waiting:
            self.waiting_room += 1
        try:
            answer = self._too_many()
            if waiting and await self._peer_ok(writer):
                try:
                    line = await asyncio.wait_for(reader.readline(), PRIORITY_GRACE_S)
                except (asyncio.TimeoutError, asyncio.LimitOverrunError, ValueError):
                    line = b""
                op = _op_of(line)
                if op in PRIORITY_OPS:
                    answer = await self._answer(line)
            elif waiting:
                return  # another user: already told
            await _send(writer, answer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except Exception as exc:  # noqa: BLE001 - a bug of ours: say so once, keep serving others
            if self.on_error is not None:
                self.on_error(f"control connection: {type(exc).__name__}: {exc}")
        finally:
            if waiting:
                self.waiting_room -= 1
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
                if answer.closed.is_set():
                    continue               # nobody reads: drain, the turn ends as aborted
                data = _line(item)
                if len(data) > self.max_event_line:
                    data = _line({"ok": False, "error": _too_long(data, self.max_event_line)})
                    answer.closed.set()    # the client stops here; the session log has it all
                try:
                    writer.write(data)
                    await writer.drain()
                except (ConnectionError, RuntimeError):
                    answer.closed.set()    # keep draining: the turn ends as aborted, logged whole
            await self._linger(writer, listener)
        finally:
            listener.cancel()

    async def _linger(self, writer: asyncio.StreamWriter, listener: asyncio.Future) -> None:
        """The turn is over: end our side (the client reads EOF after the last line) but read on
        until the client closes, for at most LINGER_S. A line the client sends meanwhile (Ctrl-C
        pressed as the answer ended) then lands in an open socket; closing at once broke the
        client's pipe, and its transport dropped the turn's last lines unread."""
        try:
            if not writer.is_closing() and writer.can_write_eof():
                writer.write_eof()
            await asyncio.wait_for(asyncio.shield(listener), LINGER_S)
        except (ConnectionError, OSError, asyncio.TimeoutError):
            pass
        except asyncio.CancelledError:
            # the host is stopping: the answer is complete, so end quietly (a cancelled connection
            # task makes asyncio 3.11 log "Unhandled exception in client_connected_cb")
            pass

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[bytes, str | None]:
        """The next request line (b"" at end of stream), or why the connection must close."""
        try:
            return await asyncio.wait_for(reader.readline(), self.idle_timeout), None
        except asyncio.TimeoutError:
            return b"", f"no request for {self.idle_timeout:g} s; closing the connection"
        except (asyncio.LimitOverrunError, ValueError):  # readline() past the stream's limit
            return b"", f"request line longer than {MAX_LINE:,} bytes; closing the connection"

    async def _answer(self, line: bytes) -> dict:
        if nesting(line) > MAX_NESTING:
            return {"ok": False, "error": f"request nested deeper than {MAX_NESTING} levels"}
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            return {"ok": False, "error": "request is not a JSON line"}
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            return {"ok": False, "error": 'request must be an object with an "op" string'}
        # Shielded: a client killed mid-request must not cancel a reload half-way.
        return await asyncio.shield(self.handler(request))


def _op_of(line: bytes) -> str | None:
    if not line or nesting(line) > MAX_NESTING:
        return None
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return request.get("op") if isinstance(request, dict) else None


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting(line: bytes) -> int:
    """How deep ``[``/``{`` nest in a JSON text (brackets inside strings do not count)."""
    brackets = _JSON_STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(itertools.accumulate(_STEP[b] for b in brackets))


def _line(message: dict) -> bytes:
    return json.dumps(message, default=str).encode() + b"\n"


def _too_long(data: bytes, limit: int) -> str:
    kind = ""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        kind = f" ({json.loads(data)['event']['type']})"
    return (f"an event{kind} of {len(data):,} bytes is over the control socket's limit of "
            f"{limit:,} bytes per line; the turn was stopped (its session log holds the event)")


async def _send(writer: asyncio.StreamWriter, message: dict) -> None:
    writer.write(_line(message))
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
