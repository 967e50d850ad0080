"""The control socket keeps room for status/reload (issue 28, finding 9): 64 idle same-uid
connections used to lock ``status`` and ``reload`` out until the idle timeout (60 s)."""
from __future__ import annotations

import asyncio
import json
import time

from dshctl.host import control

from .helpers import WAIT_S, run_async
from .test_control_limits import serve


async def _ask(path, op: str) -> dict:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(json.dumps({"op": op}).encode() + b"\n")
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), WAIT_S)
    writer.close()
    return json.loads(line)


@run_async()
async def test_status_and_reload_are_answered_with_every_connection_taken(tmp_path):
    server = await serve(tmp_path, idle_timeout=60.0, max_connections=8)
    try:
        hogs = [await asyncio.open_unix_connection(str(server.path)) for _ in range(8)]
        await asyncio.sleep(0.05)
        assert server.open == 8
        start = time.monotonic()
        for op in ("status", "reload", "ping", "confirm"):
            answer = await _ask(server.path, op)
            assert answer["ok"] is True and answer["echo"] == {"op": op}, answer
        assert time.monotonic() - start < 2
        refused = await _ask(server.path, "agent.run")   # other ops still wait their turn
        assert refused["ok"] is False and "too many connections" in refused["error"]
        for _, writer in hogs:
            writer.close()
        assert server.errors == []
    finally:
        await server.stop()


@run_async()
async def test_the_room_itself_is_bounded(tmp_path):
    server = await serve(tmp_path, idle_timeout=60.0, max_connections=4)
    try:
        hogs = [await asyncio.open_unix_connection(str(server.path))
                for _ in range(4 + control.PRIORITY_ROOM + 20)]
        await asyncio.sleep(0.1)
        assert server.open == 4 and server.waiting_room <= control.PRIORITY_ROOM
        # the ones past the room are refused at once; the room empties after its grace
        await asyncio.sleep(control.PRIORITY_GRACE_S + 0.5)
        assert server.waiting_room == 0
        assert (await _ask(server.path, "status"))["ok"] is True
        for _, writer in hogs:
            writer.close()
    finally:
        await server.stop()
