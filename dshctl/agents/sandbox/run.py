"""One confined command to its end, for tools (the ``bash`` tool's spawn routes here): spawn through
``confine``, collect bounded output, end the whole tree at exit, time-out or abort, and report it with
dsh's facts — the mode, the enforcement, a denial in the backend's dialect (then dsh's marker lines),
or a runner that failed before the command ran (``SANDBOX_UNAVAILABLE`` with ``Runner failure:``)."""
from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass

from .policy import SandboxPolicy, SandboxUnavailableError, denial_marker, escalation_hint
from .service import SandboxService, default_service

MAX_OUTPUT = 1 << 20


@dataclass
class ConfinedRun:
    exit_code: int | None          # None: killed (time-out or abort)
    stdout: str
    stderr: str
    mode: str
    enforcement: str
    denied: bool
    timed_out: bool = False

    def markers(self, escalation: bool) -> list[str]:
        """The lines a tool appends to its result text after a denial (dsh's, in dsh's order)."""
        if not self.denied:
            return []
        return [denial_marker(self.mode)] + ([escalation_hint("command")] if escalation else [])


async def run_confined(argv: list[str], policy: SandboxPolicy, *, cwd: str | None = None,
                       env: dict | None = None, pass_env=(), timeout: float | None = None,
                       abort: asyncio.Event | None = None, sandbox: SandboxService | None = None,
                       max_output: int = MAX_OUTPUT) -> ConfinedRun:
    command = (sandbox or default_service()).confine(argv, policy, cwd=cwd, env=env, pass_env=pass_env)
    proc = command.spawn(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    loop = asyncio.get_running_loop()
    reading = loop.run_in_executor(None, _collect, proc.proc, max_output)
    waits = {asyncio.ensure_future(asyncio.shield(reading))}
    aborted = asyncio.ensure_future(abort.wait()) if abort is not None else None
    if aborted is not None:
        waits.add(aborted)
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if aborted is not None:
            aborted.cancel()
    finished = any(f is not aborted for f in done)
    code = await asyncio.to_thread(proc.kill_tree)        # whatever ended it: no descendant survives
    out, err = await reading
    if not finished:
        return ConfinedRun(None, out, err, policy.mode, command.enforcement, False, timed_out=True)
    failure = command.runner_failed(code, err)
    if failure is not None:
        raise SandboxUnavailableError(policy.mode, failure)
    return ConfinedRun(code, out, err, policy.mode, command.enforcement, command.denied(code, err))


def _collect(proc: subprocess.Popen, limit: int) -> tuple[str, str]:
    out, err = proc.communicate()
    return out[:limit].decode(errors="replace"), err[:limit].decode(errors="replace")
