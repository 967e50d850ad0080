"""``@dshctl/tool-bash``: dsh's ``bash`` tool and its background jobs (``job_list``, ``job_output``, ``job_kill``).

Each call runs ``bash -c <command>`` in a fresh process group, in ``workdir`` (default: the session's
workspace; it must stay inside it), with a clean environment: only the variables named in
``SAFE_ENV`` pass from the host (never an API key or token), plus dsh's managed ``DSH_SHELL`` and
``DSH_SESSION_ID``, plus the row's ``env``. The result text is dsh's: stdout, then ``[stderr]`` and stderr,
``(no output)`` when both are empty, and the markers ``[timed out after Nms]``, ``[killed by signal: S]``,
``[exit code: N]``. Each stream keeps its last ``maxOutputBytes``; the whole stream goes to a file whose
path the result names. On timeout or abort the group gets SIGTERM, then SIGKILL after ``graceMs``; what a
command leaves running in its group when it ends (``sleep 60 &``) is killed half a second later, so a call
never outlives its command (``run_in_background`` is the way to keep something running).

Every process starts through :func:`spawn` ``(argv, cwd, env) -> process``. With a sandbox row composed
(``@dshctl/sandbox``: ``ctx.sandbox`` and ``ctx.sandboxPolicy``) the command is first confined by the
session's policy (docs/sandbox.md): a denial adds dsh's marker lines, no usable backend is
``SANDBOX_UNAVAILABLE`` (nothing runs), and ``sandbox_permissions`` + ``justification`` ask through the
approval service for a wider mode for that one call. Config: ``root``, ``timeoutMs`` (120000), ``maxTimeoutMs`` (600000), ``maxOutputBytes``
(64000), ``graceMs`` (2000), ``env`` ({}), ``enableRunInBackground`` (true).
"""
from __future__ import annotations

import asyncio
import os
import signal as signals
import tempfile
from pathlib import Path

from dshctl.agents.sandbox.policy import SandboxUnavailableError, denial_marker, escalation_hint

from .definition import Tool, error_result, text_result
from .fsbase import FsError, Roots, argument_error, fs_error_result, session_key
from .jobs import JobTable, job_tools
from .processes import Stream, drain, exited, pump, stop_group
from .schemas import BASH_PARAMETERS

name = "@dshctl/tool-bash"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "root": {"type": "string"},
    "timeoutMs": {"type": "integer", "minimum": 1, "default": 120000},
    "maxTimeoutMs": {"type": "integer", "minimum": 1, "default": 600000},
    "maxOutputBytes": {"type": "integer", "minimum": 1, "default": 64000},
    "graceMs": {"type": "integer", "minimum": 0, "default": 2000},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
    "enableRunInBackground": {"type": "boolean", "default": True},
}}

# What a command may see of the host's environment: how to find programs and speak the locale, nothing
# that authenticates (dsh drops names matching KEY|PASSWORD|SECRET|TOKEN; dshctl passes only these).
SAFE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
            "TERM", "TZ", "TMPDIR")


async def spawn(argv: list[str], cwd: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    """Start one tool process (its own process group, stdin closed, stdout/stderr piped)."""
    return await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                start_new_session=True)


def clean_env(extra: dict[str, str], session_id: str | None) -> dict[str, str]:
    env = {k: os.environ[k] for k in SAFE_ENV if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env["DSH_SHELL"] = "1"
    if session_id:
        env["DSH_SESSION_ID"] = session_id
    env.update(extra)
    return env


def render(stdout: str, stderr: str, *, exit_code: int | None, timed_out_ms: float | None) -> str:
    body = stdout
    if stderr:
        if body and not body.endswith("\n"):
            body += "\n"
        body += f"[stderr]\n{stderr}"
    if not body:
        body = "(no output)"
    markers = []
    if timed_out_ms is not None:
        markers.append(f"[timed out after {timed_out_ms:g}ms]")
    if exit_code is not None and exit_code < 0:
        markers.append(f"[killed by signal: {signals.Signals(-exit_code).name}]")
    elif exit_code:
        markers.append(f"[exit code: {exit_code}]")
    if not markers:
        return body
    return body + ("" if body.endswith("\n") else "\n") + "\n".join(markers)


class EscalationRefused(Exception):
    pass


class BashTool:
    def __init__(self, roots: Roots, config: dict, spill_dir: Path, ctx=None):
        self.roots, self.config, self.spill_dir = roots, config, spill_dir
        self.ctx = ctx
        self.jobs = JobTable()
        self.jobs_temp: list = []    # confined background jobs whose temp dirs go with the row

    def sandbox(self):
        """(``ctx.sandbox``, ``ctx.sandboxPolicy``) when a sandbox row is composed, else None: without
        one the command runs as the host's user (dsh's composition without a sandboxing executor)."""
        if self.ctx is None:
            return None
        service, policies = self.ctx.get("sandbox"), self.ctx.get("sandboxPolicy")
        return None if service is None or policies is None else (service, policies)

    async def confine(self, argv: list[str], cwd: str, env: dict, args, run):
        """The command as the session's sandbox policy runs it (an approved escalation widens it for this
        call only), or None when no sandbox is composed. Raises SandboxUnavailableError (nothing ran)."""
        composed = self.sandbox()
        if composed is None:
            return None
        service, policies = composed
        policy = policies.resolve(getattr(getattr(run, "agent", None), "session", None))
        if args.get("sandbox_permissions") is not None:
            from dshctl.agents.approval.gate import approve_escalation
            try:
                granted = await approve_escalation(self.ctx, run, requested_mode=args["sandbox_permissions"],
                                                   justification=args.get("justification"),
                                                   effective_mode=policy.mode, subject="command")
            except ValueError as exc:      # refused, cancelled, nobody to ask: the command never runs
                raise EscalationRefused(str(exc)) from None
            policy = policy.with_mode(granted)
        return service.confine(argv, policy, cwd=cwd, env=env)

    def validate(self, args) -> float:
        if not args["command"].strip():
            raise ValueError("invalid command: expected a non-empty string")
        if not args["description"].strip():
            raise ValueError("invalid description: expected a non-empty string")
        timeout = args.get("timeoutMs")
        if timeout is not None and (isinstance(timeout, bool) or timeout <= 0):
            raise ValueError(f"invalid timeoutMs: expected a positive number, got {timeout}")
        permissions, justification = args.get("sandbox_permissions"), args.get("justification")
        if permissions is not None and justification is None:
            raise ValueError("invalid escalation: sandbox_permissions requires a justification")
        if justification is not None and permissions is None:
            raise ValueError("invalid escalation: justification is only valid together with sandbox_permissions")
        if permissions is not None and self.sandbox() is None:
            raise ValueError("sandbox_permissions is not available in this composition (no sandboxing executor "
                             "to escalate)")
        return min(float(timeout or self.config["timeoutMs"]), float(self.config["maxTimeoutMs"]))

    def workdir(self, args, run) -> str:
        target = self.roots.target(run, args.get("workdir") or ".", "run in")
        if not target.real.is_dir():
            raise FsError(f'cannot run in "{target.display}": not a directory', "FS_NOT_DIRECTORY")
        return target.display

    async def start(self, args, run) -> tuple[asyncio.subprocess.Process, Stream, Stream, list]:
        cwd = self.workdir(args, run)
        sid = session_key(run)
        env = clean_env(self.config["env"], None if sid == "-" else sid)
        argv = ["bash", "-c", args["command"]]
        confined = await self.confine(argv, cwd, env, args, run)
        if confined is not None:
            argv, cwd, env = confined.argv, confined.cwd, confined.env
        try:
            proc = await spawn(argv, cwd, env)
        except BaseException:
            if confined is not None:
                confined.cleanup()
            raise
        cap = self.config["maxOutputBytes"]
        out, err = Stream(cap, self.spill_dir, "stdout"), Stream(cap, self.spill_dir, "stderr")
        pumps = [asyncio.ensure_future(pump(proc.stdout, out)), asyncio.ensure_future(pump(proc.stderr, err))]
        return proc, out, err, pumps, confined

    async def execute(self, args, run):
        try:
            timeout_ms = self.validate(args)
            if args.get("run_in_background") is True:
                return await self.background(args, run)
            proc, out, err, pumps, confined = await self.start(args, run)
        except FsError as exc:
            return fs_error_result(exc)
        except SandboxUnavailableError as exc:
            return error_result(exc.message, exc.code)
        except EscalationRefused as exc:
            return error_result(str(exc), "SANDBOX_ESCALATION")
        except ValueError as exc:
            return argument_error(str(exc))
        except OSError as exc:
            return error_result(f"cannot start bash: {exc.strerror or exc}", "SHELL_SPAWN_FAILED")
        timed_out = None
        try:
            waiter = asyncio.ensure_future(exited(proc))
            aborted = asyncio.ensure_future(run.abort.wait()) if run.abort is not None else None
            done, _ = await asyncio.wait([w for w in (waiter, aborted) if w is not None],
                                         timeout=timeout_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
            if aborted is not None:
                aborted.cancel()
            if waiter not in done:
                timed_out = None if aborted in done else timeout_ms
                await stop_group(proc, self.config["graceMs"] / 1000)
                waiter.cancel()
        finally:
            if proc.returncode is None:    # cancelled from outside: leave nothing running
                await stop_group(proc, 0.2)
            await drain(proc, pumps)
            out.close()
            err.close()
            if confined is not None:
                confined.cleanup()
        if run.abort is not None and run.abort.is_set() and timed_out is None and proc.returncode is not None \
                and proc.returncode < 0:
            return error_result("tool call aborted", "TOOL_ABORTED")
        text = render(out.text(), err.text(), exit_code=proc.returncode, timed_out_ms=timed_out)
        if confined is not None and confined.denied(proc.returncode, err.text()):
            text += "\n" + "\n".join([denial_marker(confined.policy.mode), escalation_hint("command")])
        return text_result(text)

    async def background(self, args, run):
        if not self.config["enableRunInBackground"]:
            raise ValueError("run_in_background is disabled for this deployment (enableRunInBackground: false)")
        proc, out, err, pumps, confined = await self.start(args, run)
        if confined is not None and confined.temp_dir is not None:   # a Landlock job's private temp dir
            self.jobs_temp.append(confined)
        job_id = self.jobs.add(session_key(run), args["command"], proc, out, err, pumps,
                               self.config["graceMs"] / 1000)
        return text_result(f"started background job {job_id}")


def apply(ctx, config):
    from .fs import workspace_root
    roots = Roots(workspace_root(ctx, config) if config.get("root") else None)
    spill_dir = Path(tempfile.mkdtemp(prefix="dshctl-bash-"))
    bash = BashTool(roots, config, spill_dir, ctx)
    scope = ctx.get("toolScope") or "global"
    tools = [Tool("bash", "Run a bash command (bash -c) in a fresh shell in the workspace and return its output "
                          "and exit status; long output keeps its tail.", bash.execute, BASH_PARAMETERS)]
    if config["enableRunInBackground"]:
        tools += job_tools(bash.jobs)
    else:
        tools[0].parameters = {**BASH_PARAMETERS, "properties": {
            k: v for k, v in BASH_PARAMETERS["properties"].items() if k != "run_in_background"}}
    for tool in tools:
        ctx.tools.register(ctx, tool.name, tool, scope)

    async def stop_all():
        await bash.jobs.kill_all()
        for confined in bash.jobs_temp:
            confined.cleanup()
        import shutil
        shutil.rmtree(spill_dir, ignore_errors=True)
    ctx.effect(lambda: stop_all, "tool-bash: stop background jobs, remove spill files")
