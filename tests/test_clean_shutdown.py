"""Ctrl-C leaves no asyncio debris (issue 29): no "Task was destroyed but it is pending!", no coroutine
never awaited, no exception ignored, with Python's warnings turned into errors, in ``agent chat`` (a
real terminal, the model a real SSE stream on loopback, stalled mid-answer) and in ``host run``'s log
when it is stopped with a turn in flight."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time

import pytest

from tests.agents.loop_rows import agent_home
from tests.agents.sse_server import Sse, SseServer, chunk
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, user_file, write
from tests.pty_chat import PtyChat

# every warning is an error, except the ones typer (third party) triggers in click
WARNINGS_AS_ERRORS = "error,ignore::DeprecationWarning:typer,ignore::DeprecationWarning:typer.core"
DEBRIS = ("Task was destroyed", "never awaited", "Exception ignored", "Traceback", "Warning:",
          "Event loop is closed", "Unclosed")


def debris(text: str) -> list[str]:
    return [marker for marker in DEBRIS if marker in text]


@pytest.fixture
def stalled_model(tmp_path, monkeypatch):
    """A home whose model answers each turn with a few words, then stalls with the stream open."""
    monkeypatch.setenv("PYTHONWARNINGS", WARNINGS_AS_ERRORS)   # the processes below inherit it
    home = agent_home(tmp_path, [])
    with SseServer() as server:
        words = [chunk({"role": "assistant", "content": "word "}) for _ in range(5)]
        server.script = [Sse(words, stall_after=4) for _ in range(4)]
        write(user_file(home), "- id: llm\n  disabled: true\n- insert:\n    - id: real\n"
                               f"      name: '@dshctl/llm-openai'\n      config: {{baseUrl: '{server.base_url}', model: m}}\n")
        yield home


def read_for(chat: PtyChat, seconds: float) -> None:
    """Everything the terminal shows in the next ``seconds`` (or until the process closes it)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([chat.fd], [], [], left)[0]:
            continue
        try:
            data = os.read(chat.fd, 4096)
        except OSError:
            return
        if not data:
            return
        chat.seen += data


def exit_code_within(chat: PtyChat, seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        read_for(chat, 0.1)
        pid, status = os.waitpid(chat.pid, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status)
    return None


def interrupted_chat(home) -> tuple[int | None, str]:
    """Two turns stopped with Ctrl-C mid-answer, then a third left with Ctrl-C twice (at once): exit 130,
    or 0 when the abort was over before the second Ctrl-C and Ctrl-D ended the chat."""
    with PtyChat(home) as chat:
        chat.read_until(b"you> ")
        for n in (1, 2):
            chat.seen = b""
            chat.type(b"talk\n")
            chat.read_until(b"word")
            chat.type(b"\x03")
            chat.read_until(b"aborting the turn")
            chat.read_until(b"you> ")
        chat.seen = b""            # (each wait below is for this turn's text)
        chat.type(b"talk\n")
        chat.read_until(b"word")
        chat.type(b"\x03")
        chat.read_until(b"aborting the turn")
        chat.type(b"\x03")         # (signals do not queue: the second must come after the first)
        code = exit_code_within(chat, 5)
        if code is None:           # the abort was over before the second Ctrl-C: leave with Ctrl-D
            chat.type(b"\x04")
            code = exit_code_within(chat, WAIT_S)
        return code, chat.seen.decode(errors="replace")


def test_agent_chat_on_an_embedded_host_leaves_nothing_pending_after_ctrl_c(stalled_model):
    code, screen = interrupted_chat(stalled_model)
    assert code in (0, 130), screen
    assert debris(screen) == [], screen


def test_agent_chat_on_a_running_host_and_the_hosts_log_after_ctrl_c(stalled_model):
    with HostProcess(stalled_model) as host:
        code, screen = interrupted_chat(stalled_model)
        assert code in (0, 130) and debris(screen) == [], screen
        turn = subprocess.Popen([DSHCTL, "--home", str(stalled_model), "agent", "run", "--profile", "p", "talk"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        host.wait_for("fiber/active", match=lambda e: e["message"].startswith("agent:"))
        time.sleep(0.3)                                          # the turn is streaming, then stalls
        host.proc.send_signal(signal.SIGINT)
        host.wait_for("host/stopped")
        assert host.proc.wait(WAIT_S) == 0
        log = json.dumps(host.seen) + host.proc.stdout.read()
        stderr = host.proc.stderr.read()
        turn.communicate(timeout=WAIT_S)
    assert debris(log) == [] and debris(stderr) == [], (log, stderr)
    assert [e for e in host.seen if e.get("level") == "error"] == []


class FinishedTurn:
    """A streamed ``agent.run`` answer that ends at once: what the control server streams for a turn."""

    def __init__(self, lines):
        import asyncio
        self.lines, self.incoming, self.closed = lines, asyncio.Queue(), asyncio.Event()

    async def __aiter__(self):
        for line in self.lines:
            yield line


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_an_abort_sent_after_the_host_ended_the_turn_keeps_the_turns_end(tmp_path, busy):
    """Ctrl-C as the answer finishes: the host's control server has streamed the turn's last lines
    when the client sends its abort. The client still reads them all, and the abort neither fails (a
    never-retrieved ConnectionResetError) nor breaks the pipe (EPIPE made the client's transport drop
    the unread lines, and the chat died). ``busy``: the client's loop did not run in between."""
    import asyncio

    from dshctl.cli.agent_link import SocketLink
    from dshctl.host.control import ControlServer

    lines = [{"ok": True, "event": {"type": "turn/start"}}, {"ok": True, "event": {"type": "turn/end"}},
             {"ok": True, "done": True, "session": "s", "reason": {"kind": "completed"}}]

    async def scenario():
        async def handler(request):
            return FinishedTurn(lines)
        server = ControlServer(tmp_path / ".dshctl" / "host.sock", handler)
        await server.start()
        link = SocketLink(server.path)
        seen = []
        async for line in link.turn({"prompt": "talk"}):
            seen.append(line)
            if len(seen) == 1:
                if busy:
                    time.sleep(0.3)           # the server writes the rest meanwhile
                else:
                    await asyncio.sleep(0.3)
                await link.send({"abort": True})
        await server.stop()
        return seen

    assert asyncio.run(scenario()) == lines
