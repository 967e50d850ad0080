"""The host's log ledger: one byte budget (``maxLogBytes``) shared by ``log`` frames and stray fd 1/2 output.

Two ledgers can run out at different points: the worker's (it sends its marker as a ``log`` frame with
``truncated: true``) and this one (forged frames, raw writes to fd 1/2). Whichever runs out first, the
run's logs end with exactly one marker line, dsh's text, and capture stops there. A program that prints
the marker text itself is just output: only the frame's flag counts.
"""
from __future__ import annotations

from .protocol import log_truncation_marker


class LogLedger:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.used = 0
        self.entries: list[str] = []
        self.closed = False

    def admit(self, text: str, *, from_worker_marker: bool = False) -> None:
        if self.closed:
            return
        if from_worker_marker:
            self._close()
            return
        cost = len(text.encode("utf-8", "surrogatepass"))
        if self.used + cost > self.max_bytes:
            self._close()
            return
        self.used += cost
        self.entries.append(text)

    def _close(self) -> None:
        self.closed = True
        self.entries.append(log_truncation_marker(self.max_bytes))
