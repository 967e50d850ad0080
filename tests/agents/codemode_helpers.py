"""Helpers of the Code Mode tests: run a program on a real worker, count what a run could leak."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

from dshctl.agents.codemode.runtime import Limits, Namespace, run_program

FAST = Limits(cpu_seconds=5, wall_seconds=20)


def run(program: str, functions: dict | None = None, limits: Limits = FAST, **kw):
    return asyncio.run(run_program(program, [Namespace("tools", functions or {})], limits, **kw))


def fd_links() -> dict[str, str]:
    """This process's descriptors and what they point at (the listing's own fd vanishes mid-walk)."""
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return out


def live_descendants() -> list[int]:
    """Processes (not zombies) whose parent chain leads to us, plus any in a session we started."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat[0] in ("Z", "X"):
            continue
        if int(stat[1]) == me:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def scratch_dirs() -> set[str]:
    import tempfile
    return {p.name for p in Path(tempfile.gettempdir()).glob(f"dshctl-code-{os.getpid()}-*")}
