"""Leak counts for the attack corpora (issue 28): file descriptors, child processes, threads, temp
entries and RSS of this test process, before and after a corpus runs."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path


def _children() -> int:
    me = str(os.getpid())
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me:  # field 4: the parent pid
            count += 1
    return count


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Counts:
    fds: int
    children: int
    threads: int
    temp: int
    rss_mb: float

    @classmethod
    def now(cls, *temp_dirs: Path) -> "Counts":
        temp = sum(len(list(d.rglob("*"))) for d in temp_dirs if d.is_dir())
        return cls(len(os.listdir("/proc/self/fd")), _children(), threading.active_count(), temp,
                   _rss_mb())

    def settled(self, count, *, timeout: float = 5.0, thread_slack: int = 0) -> "Counts":
        """``count()`` again until nothing grew over this count, for at most ``timeout`` seconds: the
        test's own servers (a registry thread finishing a trickled answer, its socket) may still be
        closing when the corpus returns; a real leak is still there when the time is up."""
        import time
        deadline = time.monotonic() + timeout
        while True:
            after = count()
            grew = any(getattr(after, k) > getattr(self, k) + (thread_slack if k == "threads" else 0)
                       for k in ("fds", "children", "threads", "temp"))
            if not grew or time.monotonic() > deadline:
                return after
            time.sleep(0.1)

    def assert_flat(self, after: "Counts", *, rss_slack_mb: float = 64, thread_slack: int = 0) -> None:
        """``thread_slack``: asyncio's default executor grows its pool lazily (bounded by
        min(32, cpus + 4)); those threads are reused, not leaked."""
        slack = {"threads": thread_slack}
        grew = {k: (getattr(self, k), getattr(after, k)) for k in ("fds", "children", "threads", "temp")
                if getattr(after, k) > getattr(self, k) + slack.get(k, 0)}
        assert not grew, f"leaked (before, after): {grew}"
        assert after.rss_mb - self.rss_mb < rss_slack_mb, (self.rss_mb, after.rss_mb)
