"""Lines over 1 MiB on the control socket (issue 28, finding 3): a 2 MB model reply reaches
``agent run`` whole; past the documented limit, one clear refusal instead of exit 3."""
from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from dshctl.errors import DshctlError
from dshctl.host import control
from tests.agents.loop_rows import agent_home
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess


def test_a_2_mb_model_reply_reaches_agent_run_whole(tmp_path):
    big = "x" * 2_000_000
    home = agent_home(tmp_path, [{"text": big}])
    with HostProcess(home):
        result = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p",
                                 "--format", "json", "hello"], capture_output=True, text=True,
                                timeout=WAIT_S)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in result.stdout.splitlines()][:-1]
    texts = ["".join(b["text"] for b in e["data"]["message"]["content"] if b["type"] == "text")
             for e in events if e["type"] == "assistant/message"]
    assert texts == [big]


class _Answer:
    """A streamed answer like agent_ops.TurnStream: ``incoming``, ``closed``, async iteration."""

    def __init__(self, items):
        self.items = items
        self.incoming: asyncio.Queue = asyncio.Queue()
        self.closed = asyncio.Event()
        self.sent_after_close = 0

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        for item in self.items:
            if self.closed.is_set():
                self.sent_after_close += 1
            yield item


async def _turn_with(tmp_path, items, max_event_line):
    from dshctl.cli.agent_link import SocketLink

    answer = _Answer(items)

    async def handler(request):
        return answer
    server = control.ControlServer(tmp_path / "s" / "control.sock", handler,
                                   max_event_line=max_event_line)
    await server.start()
    try:
        got = []
        with pytest.raises(DshctlError) as err:
            async for line in SocketLink(server.path).turn({"prompt": "hi"}):
                if not line.get("ok", True):
                    raise DshctlError(line["error"])
                got.append(line)
        return got, err.value, answer
    finally:
        await server.stop()


def test_an_event_past_the_limit_is_refused_in_one_line(tmp_path):
    items = [{"ok": True, "event": {"type": "a", "data": "small"}},
             {"ok": True, "event": {"type": "b", "data": "y" * 5000}},
             {"ok": True, "done": True}]
    got, err, answer = asyncio.run(_turn_with(tmp_path, items, 4096))
    assert [g["event"]["type"] for g in got] == ["a"]
    assert "4,096 bytes" in err.message and "event" in err.message
    assert answer.closed.is_set()  # the turn learns that nobody reads it any more


def test_a_request_past_the_limit_is_refused_before_it_is_sent(tmp_path):
    from dshctl.cli.agent_link import SocketLink

    async def go():
        async def handler(request):
            return {"ok": True}
        server = control.ControlServer(tmp_path / "s" / "control.sock", handler)
        await server.start()
        try:
            async for _ in SocketLink(server.path).turn({"prompt": "p" * (control.MAX_LINE + 1)}):
                pass
        finally:
            await server.stop()
    with pytest.raises(DshctlError) as err:
        asyncio.run(go())
    assert f"{control.MAX_LINE:,}" in err.value.message and "prompt" in err.value.message
