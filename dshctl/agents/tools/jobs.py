"""Background jobs of the ``bash`` tool and dsh's ``job_list`` / ``job_output`` / ``job_kill`` tools.

Jobs are numbered ``bash-1``, ``bash-2``, … per plugin instance and belong to the session that started
them (another session sees ``unknown job``). Texts are dsh's: ``<id> [bash] <status> — <command>``,
``(no background jobs)``, output since the last read then ``[status: running]`` or
``[status: completed, exit code: N]`` / ``[status: killed, signal: S]``, ``requested cancellation of
job <id>``, ``job <id> had already finished [status: …]``, ``unknown job <id>``. A job's output keeps
at most the bash row's ``maxOutputBytes`` unread; everything goes to its spill file as for a foreground
command. Unloading the plugin stops every job.
"""
from __future__ import annotations

import asyncio
import signal as signals
from dataclasses import dataclass, field

from .definition import Tool, error_result, text_result
from .fsbase import session_key
from .processes import drain, exited, stop_group
from .schemas import JOB_KILL_PARAMETERS, JOB_LIST_PARAMETERS, JOB_OUTPUT_PARAMETERS

WAIT_DEFAULT_MS = 30_000
WAIT_MAX_MS = 600_000


@dataclass
class Job:
    id: str
    owner: str
    label: str
    proc: object
    out: object
    err: object
    pumps: list
    grace_s: float
    killed: bool = False
    done: asyncio.Future | None = field(default=None)

    @property
    def status(self) -> str:
        if self.proc.returncode is None:
            return "running"
        return "killed" if self.killed or self.proc.returncode < 0 else "completed"

    def status_line(self) -> str:
        code = self.proc.returncode
        if code is None:
            return "[status: running]"
        if code < 0:
            return f"[status: {self.status}, signal: {signals.Signals(-code).name}]"
        return f"[status: {self.status}, exit code: {code}]"


class JobTable:
    def __init__(self):
        self.jobs: dict[str, Job] = {}
        self.counter = 0

    def add(self, owner: str, label: str, proc, out, err, pumps, grace_s: float) -> str:
        self.counter += 1
        job = Job(f"bash-{self.counter}", owner, label, proc, out, err, pumps, grace_s)
        job.done = asyncio.ensure_future(self._settle(job))
        self.jobs[job.id] = job
        return job.id

    @staticmethod
    async def _settle(job: Job) -> None:
        await exited(job.proc)
        await drain(job.proc, job.pumps)
        job.out.close()
        job.err.close()

    def get(self, owner: str, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or job.owner != owner:
            raise KeyError(job_id)
        return job

    def listing(self, owner: str) -> str:
        mine = [j for j in self.jobs.values() if j.owner == owner]
        if not mine:
            return "(no background jobs)"
        return "\n".join(f"{j.id} [bash] {j.status} — {j.label}" for j in mine)

    async def kill(self, job: Job) -> None:
        job.killed = True
        await stop_group(job.proc, job.grace_s)
        await job.done

    async def kill_all(self) -> None:
        running = [j for j in self.jobs.values() if j.proc.returncode is None]
        await asyncio.gather(*(self.kill(j) for j in running), return_exceptions=True)
        for job in self.jobs.values():
            if job.done is not None:
                await asyncio.gather(job.done, return_exceptions=True)


def job_tools(table: JobTable) -> list[Tool]:
    def job_id(args) -> str | None:
        value = args.get("job_id")
        return value if isinstance(value, str) and value.strip() else None

    def unknown(value) -> dict:
        return error_result(f"unknown job {value}", "JOB_UNKNOWN")

    async def job_list(args, run):
        return text_result(table.listing(session_key(run)))

    async def job_output(args, run):
        ident = job_id(args)
        if ident is None:
            return error_result(f"invalid job_id: expected a non-empty string, got {args.get('job_id')!r}",
                                "TOOL_ARGUMENTS_INVALID")
        try:
            job = table.get(session_key(run), ident)
        except KeyError:
            return unknown(ident)
        if args.get("wait") is True and job.done is not None:
            timeout = min(float(args.get("timeout_ms") or WAIT_DEFAULT_MS), WAIT_MAX_MS) / 1000
            await asyncio.wait([job.done], timeout=timeout)
        body = job.out.take_unread() + job.err.take_unread() or "(no new output)"
        return text_result(body + ("" if body.endswith("\n") else "\n") + job.status_line())

    async def job_kill(args, run):
        ident = job_id(args)
        try:
            job = table.get(session_key(run), ident or "")
        except KeyError:
            return unknown(ident)
        if job.proc.returncode is not None:
            return text_result(f"job {job.id} had already finished {job.status_line()}")
        job.killed = True
        asyncio.ensure_future(table.kill(job))
        return text_result(f"requested cancellation of job {job.id}")

    return [
        Tool("job_list", "List this session's background jobs with their ids and statuses.", job_list,
             JOB_LIST_PARAMETERS, is_concurrency_safe=lambda _a: True),
        Tool("job_output", "Read a background job's new output and its status; wait: true waits for its end.",
             job_output, JOB_OUTPUT_PARAMETERS),
        Tool("job_kill", "Stop a running background job; returns at once.", job_kill, JOB_KILL_PARAMETERS),
    ]
