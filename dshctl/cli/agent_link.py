"""How ``dshctl agent`` reaches an agent: the running host's control socket, or an embedded host.

Both speak the ``agent.run`` stream of ``dshctl.host.agent_ops`` (response lines out; answer and abort
lines in), so ``run`` and ``chat`` do not care which one they hold.
"""
from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import AsyncIterator

from dshctl.errors import DshctlError, Loc


class SocketLink:
    """One connection per turn to the running host."""

    def __init__(self, path: Path, key_env: str | None = None):
        self.path = path
        self.key_env = key_env      # the host's llm row reads this variable: the client lends its own value
        self.where = f"the running host ({path})"
        self._writer: asyncio.StreamWriter | None = None

    async def turn(self, request: dict) -> AsyncIterator[dict]:
        from dshctl.host.control import MAX_EVENT_LINE, MAX_LINE, _addressable
        key = os.environ.get(self.key_env) if self.key_env else None
        if key:   # the key of the process that runs `agent run`, as an embedded host would read it
            request = {**request, "credentials": {self.key_env: key}}
        data = json.dumps({"op": "agent.run", **request}).encode() + b"\n"
        if len(data) > MAX_LINE:
            raise DshctlError(f"the request (prompt and options) is {len(data):,} bytes; the "
                              f"host's control socket takes requests up to {MAX_LINE:,} bytes",
                              hint="put the text into a file and ask the agent to read it")
        with _addressable(self.path) as address:
            reader, writer = await asyncio.open_unix_connection(address, limit=MAX_EVENT_LINE)
        self._writer = writer
        try:
            writer.write(data)
            await writer.drain()
            while line := await _read_line(reader, self.where):
                yield json.loads(line)
        except ConnectionError as exc:   # the host went away mid-turn (stopped, or killed)
            raise DshctlError(f"lost the connection to {self.where} mid-turn ({exc.strerror or exc})",
                              hint="`dshctl status` says whether the host still runs; the session log "
                                   "has the turn as far as it got (`dshctl session show`)") from None
        finally:
            self._writer = None
            writer.close()
            try:   # closed now, not by the garbage collector (an unclosed-transport ResourceWarning)
                await asyncio.wait_for(writer.wait_closed(), 1)
            except (ConnectionError, OSError, asyncio.TimeoutError):
                pass

    async def send(self, message: dict) -> None:
        """An answer or an abort for the turn; once the host has closed the turn's connection there is
        nothing left to tell it (the stream's end says how the turn ended)."""
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        try:
            writer.write(json.dumps(message).encode() + b"\n")
            await writer.drain()
        except ConnectionError:   # reset or broken pipe: the turn is over on the host's side
            pass

    async def close(self) -> None:
        pass


async def _read_line(reader: asyncio.StreamReader, where: str) -> bytes:
    from dshctl.host.control import MAX_EVENT_LINE
    try:
        return await reader.readline()
    except (asyncio.LimitOverrunError, ValueError):  # the host refuses longer lines itself
        raise DshctlError(f"{where} sent a line longer than {MAX_EVENT_LINE:,} bytes",
                          hint="the turn goes on in the host; read it in the session log") from None


class EmbeddedLink:
    """A host booted in this process for as long as the command runs (no socket, no watcher)."""

    def __init__(self, home: Path, profile: str):
        from dshctl.host.hostlog import HostLog
        from dshctl.host.runner import Host, HostOptions
        self.log_text = io.StringIO()
        self.host = Host(HostOptions(home=home, profile=profile, watch=False, module_reload=False),
                         HostLog("json", stream=self.log_text))
        self.where = f"an embedded host (profile {profile!r})"
        self._stream = None
        self._booted = False

    async def start(self) -> None:
        # The runtime's records (a plugin that failed to apply, with its traceback) go to this host's
        # own log, not to stderr: the command reports a failed row in one line instead.
        self._handler = self.host.log.attach_logging()
        await self.host.boot()
        self._booted = True
        agents = self.host.root.get("agents")
        failed = _failed_rows(self.host.status()["rows"])
        if failed and getattr(agents, "factory", None) is None:  # the agent cannot run: say why
            row = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise DshctlError(f"{self.where}: row {row['full_id']} ({row['name']}) failed to start{more}: "
                              f"{row.get('error') or 'see the host log'}",
                              hint="fix it and run again; `dshctl host run` shows every row as it starts")

    async def turn(self, request: dict) -> AsyncIterator[dict]:
        from dshctl.host.agent_ops import TurnStream
        self._stream = TurnStream(self.host, request)
        try:
            async for line in self._stream:
                yield line
        finally:
            self._stream = None

    async def send(self, message: dict) -> None:
        if self._stream is not None:
            self._stream.incoming.put_nowait(message)

    async def close(self) -> None:
        if self._booted:
            await self.host.shutdown()
            self._booted = False
        if getattr(self, "_handler", None) is not None:
            self.host.log.detach_logging(self._handler)
            self._handler = None


def _failed_rows(rows: list) -> list:
    out = []
    for row in rows:
        if row.get("state") == "FAILED":
            out.append(row)
        out += _failed_rows(row.get("children") or [])
    return out


async def connect(home: Path, profile: str):
    """The running host's link when one answers, else an embedded host (booted here)."""
    from dshctl.host import control, state_dir
    path = state_dir.socket_path(home, profile)
    try:
        pong = await asyncio.to_thread(control.request, path, {"op": "ping"}, timeout=5)
        key_env = pong.get("keyEnv") if isinstance(pong, dict) else None
        return SocketLink(path, key_env if isinstance(key_env, str) and key_env else None)
    except control.NoHost:
        pass
    link = EmbeddedLink(home, profile)
    try:
        await link.start()
    except DshctlError:
        await link.close()
        raise
    except Exception as exc:  # noqa: BLE001 - a profile that cannot boot is the user's to fix
        await link.close()
        raise DshctlError(f"the profile failed to start: {type(exc).__name__}: {exc}",
                          loc=Loc(str(home / "profiles" / profile)),
                          hint="run `dshctl host run` to see the boot log") from None
    return link


async def drive_turn(link, request: dict, printer) -> dict | None:
    """One turn through ``link``; Ctrl-C asks the host to abort it (a second Ctrl-C drops the link)."""
    import signal
    loop = asyncio.get_running_loop()
    presses = []
    aborts: list[asyncio.Task] = []   # held: a task nobody references can be collected while pending

    def on_interrupt():
        presses.append(1)
        if len(presses) == 1:
            aborts.append(loop.create_task(link.send({"abort": True})))
            aborts[-1].add_done_callback(_retrieve)
            printer.note("aborting the turn (Ctrl-C again to leave at once)")
        else:
            raise KeyboardInterrupt
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        done = None
        async for line in link.turn({k: v for k, v in request.items() if v is not None}):
            if not line.get("ok", False):
                raise DshctlError(f"agent run on {link.where}: {line.get('error')}", hint=line.get("hint"))
            if "ask" in line:
                await link.send({"answer": await printer.ask(line["ask"])})
            elif "event" in line:
                printer.event(line["event"])
            elif "subagent" in line:
                printer.subagent(line["subagent"])
            elif line.get("done"):
                done = line
        if done is None:
            raise DshctlError("the host closed the turn's stream early", hint="see the host's log")
        printer.done(done)
        return done.get("reason")
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        for task in aborts:
            task.cancel()   # a no-op once sent; the turn is over either way


def _retrieve(task: asyncio.Task) -> None:
    """Take a fire-and-forget task's outcome, so asyncio never reports it as never retrieved."""
    if not task.cancelled():
        task.exception()
