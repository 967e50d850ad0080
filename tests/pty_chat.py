"""``dshctl agent chat`` in a real terminal (a pty), as a person types into it."""
from __future__ import annotations

import os
import pty
import signal
import time

from tests.host.helpers import DSHCTL, WAIT_S


class PtyChat:
    """``with PtyChat(home) as chat``: ``chat.read_until(b"you> ")``, ``chat.type(b"hi\\n")``,
    ``chat.exit_code()``; the process is killed on the way out if it is still there."""

    def __init__(self, home, profile: str = "p"):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(DSHCTL, [DSHCTL, "--home", str(home), "agent", "chat", "--profile", profile])
        self.seen = b""

    def read_until(self, marker: bytes) -> None:
        deadline = time.monotonic() + WAIT_S
        while marker not in self.seen and time.monotonic() < deadline:
            try:
                self.seen += os.read(self.fd, 4096)
            except OSError:
                break
        assert marker in self.seen, self.seen.decode(errors="replace")

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def exit_code(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)

    def __enter__(self) -> "PtyChat":
        return self

    def __exit__(self, *exc) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self.fd)
