"""``ctx.sandbox``: ``confine(argv, policy)`` -> what to spawn instead, or ``SANDBOX_UNAVAILABLE``.

The backend chain is probed once per service and cached: bubblewrap when it builds our namespaces here,
else the Landlock launcher when the kernel offers Landlock and the launcher confines a probe, else none
— and then every confined mode fails closed; nothing runs unconfined unless the policy says
``danger-full-access``. ``DSHCTL_SANDBOX_BACKENDS`` (or the plugin's ``backends``) names the chain:
``bwrap,landlock`` (the default), one of them, or ``none``.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import bwrap, landlock
from .env import confined_env
from .hidden import is_within, readable_subtrees, secret_paths
from .policy import WORKSPACE_WRITE, SandboxPolicy, SandboxUnavailableError

BACKENDS = ("bwrap", "landlock")
BACKENDS_ENV = "DSHCTL_SANDBOX_BACKENDS"
LAUNCHER = str(Path(__file__).with_name("launcher.py"))
LANDLOCK_DENIALS = ("permission denied", "operation not permitted")
LANDLOCK_FAILURE = "dshctl-landlock: "
FULL_LANDLOCK_ABI = 4        # file rights incl. truncate (3) and TCP (4): every promise we make


@dataclass(frozen=True)
class Backend:
    name: str                    # "bwrap" | "landlock" | "none" (danger-full-access)
    enforcement: str             # "full" | "partial" (an older Landlock ABI)
    denial_signatures: tuple[str, ...] = ()
    runner_failure_signatures: tuple[str, ...] = ()
    abi: int = 0


UNCONFINED = Backend("none", "full")


@dataclass
class ConfinedCommand:
    """A ready-to-spawn command: pass ``argv``, ``env`` and ``cwd`` to your own spawn, or call
    :meth:`spawn`. ``temp_dir`` (a host directory, Landlock only) is removed by :meth:`cleanup`."""

    argv: list[str]
    env: dict
    cwd: str
    policy: SandboxPolicy
    backend: Backend
    temp_dir: str | None = None

    @property
    def enforcement(self) -> str:
        return self.backend.enforcement

    def spawn(self, **popen: object) -> "ConfinedProcess":
        popen.setdefault("start_new_session", True)
        popen.setdefault("stdin", subprocess.DEVNULL)
        proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, **popen)  # type: ignore[arg-type]
        return ConfinedProcess(proc, self)

    def runner_failed(self, exit_code: int | None, stderr: str) -> str | None:
        """The runner's own fatal line when it (not the command) failed, else None (dsh's rule)."""
        if not exit_code or not self.backend.runner_failure_signatures:
            return None
        if self.backend.name == "landlock" and exit_code != 125:
            return None
        for line in stderr.splitlines():
            if any(sig in line.lower() for sig in self.backend.runner_failure_signatures):
                return line
        return None

    def denied(self, exit_code: int | None, stderr: str) -> bool:
        """A failed run whose stderr speaks this backend's denial dialect."""
        lowered = stderr.lower()
        return bool(exit_code) and any(sig in lowered for sig in self.backend.denial_signatures)

    def cleanup(self) -> None:
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None


class ConfinedProcess:
    """A spawned confined command and the way to end all of it."""

    def __init__(self, proc: subprocess.Popen, command: ConfinedCommand):
        self.proc, self.command = proc, command

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill_tree(self, grace: float = 1.0) -> int:
        """End the command and every process it started; reap; remove the private temp dir.

        bwrap: SIGKILL to its group — its PID namespace dies with its first process. Landlock: SIGTERM
        to the launcher, which kills and reaps every descendant (a SIGKILL would orphan them), then
        SIGKILL to the group in case it does not answer within ``grace``."""
        if self.proc.poll() is None and self.command.backend.name == "landlock":
            _signal(lambda: os.kill(self.proc.pid, signal.SIGTERM))
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        _signal(lambda: os.killpg(self.proc.pid, signal.SIGKILL))
        code = self.proc.wait()
        self.command.cleanup()
        return code


def _signal(send) -> None:
    try:
        send()
    except (ProcessLookupError, PermissionError):
        pass


_DEFAULT: "SandboxService | None" = None
_DEFAULT_LOCK = threading.Lock()


def default_service() -> "SandboxService":
    """The process's own provider, for consumers with no ``ctx.sandbox`` row (probed once, cached)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = SandboxService()
        return _DEFAULT


class SandboxService:
    """The provider behind ``ctx.sandbox``. One per host; thread-safe probe."""

    def __init__(self, backends: list[str] | tuple[str, ...] | None = None, probe_timeout: float = 5.0,
                 python: str | None = None):
        self.chain = tuple(backends) if backends is not None else chain_from_env()
        unknown = [b for b in self.chain if b not in BACKENDS]
        if unknown:
            raise ValueError(f"unknown sandbox backend {unknown[0]!r} (known: {', '.join(BACKENDS)}, or none)")
        self.probe_timeout, self.python = probe_timeout, python or sys.executable
        self._selected: Backend | None = None
        self._why: list[str] = []
        self._probed = False
        self._lock = threading.Lock()

    def backend(self) -> Backend | None:
        """The chain's verdict (probed on first use, then cached): the backend, or None."""
        with self._lock:
            if not self._probed:
                self._selected = self._probe_chain()
                self._probed = True
            return self._selected

    @property
    def unavailable_reasons(self) -> list[str]:
        self.backend()
        return list(self._why)

    def _probe_chain(self) -> Backend | None:
        for name in self.chain:
            found = self._probe_bwrap() if name == "bwrap" else self._probe_landlock()
            if found is not None:
                return found
        return None

    def _probe_bwrap(self) -> Backend | None:
        why = bwrap.probe(self.probe_timeout)
        if why is not None:
            self._why.append(f"bwrap: {why}")
            return None
        return Backend("bwrap", "full", bwrap.DENIAL_SIGNATURES, bwrap.RUNNER_FAILURE_SIGNATURES)

    def _probe_landlock(self) -> Backend | None:
        abi = landlock.abi_version()
        if abi < 1:
            self._why.append("landlock: the kernel offers no Landlock ABI")
            return None
        enforcement = "full" if abi >= FULL_LANDLOCK_ABI else "partial"
        candidate = Backend("landlock", enforcement, LANDLOCK_DENIALS, (LANDLOCK_FAILURE,), abi)
        spec = {"read": ["/"], "write": ["/dev/null"], "network": False, "abi": abi}
        try:
            done = subprocess.run([self.python, "-I", "-S", LAUNCHER, *landlock.launcher_args(spec), "--",
                                   self.python, "-I", "-S", "-c", ""],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  timeout=self.probe_timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self._why.append(f"landlock: the launcher did not run: {exc}")
            return None
        if done.returncode != 0:
            self._why.append(f"landlock: {done.stderr.decode(errors='replace').strip() or done.returncode}")
            return None
        return candidate

    def confine(self, argv: list[str], policy: SandboxPolicy, *, cwd: str | None = None,
                env: dict | None = None, pass_env: tuple[str, ...] | list[str] = (),
                extra_env: dict | None = None) -> ConfinedCommand:
        """Wrap ``argv`` (a program and its arguments, not a shell string) to run under ``policy``.

        ``env`` is the environment to pick from (the host's by default): only harmless names and the
        ``pass_env`` the user named explicitly come through, ``HOME``/``TMPDIR`` point at the private
        temp dir, then ``extra_env`` is set. ``cwd`` defaults to the workspace root. Raises
        :class:`SandboxUnavailableError` when the mode is confined and no backend runs here."""
        argv = [str(a) for a in argv]
        if not argv:
            raise ValueError("confine: an empty argv")
        cwd = os.path.realpath(cwd or policy.workspace_root)
        if not policy.confined:
            temp = tempfile.mkdtemp(prefix="dshctl-sandbox-")
            return ConfinedCommand(argv, confined_env(temp, base=env, pass_env=pass_env, extra=extra_env),
                                   cwd, policy, UNCONFINED, temp)
        backend = self.backend()
        if backend is None:
            raise SandboxUnavailableError(policy.mode, "; ".join(self._why) or None)
        hidden = secret_paths(policy.hide)
        if backend.name == "bwrap":
            wrapped = ["bwrap", *bwrap.profile_args(policy, hidden, cwd), "--", *argv]
            return ConfinedCommand(wrapped, confined_env(bwrap.PRIVATE_TMP, base=env, pass_env=pass_env,
                                                         extra=extra_env, hidden=hidden), cwd, policy, backend)
        temp = tempfile.mkdtemp(prefix="dshctl-sandbox-")
        spec = landlock_spec(policy, hidden, temp, backend.abi)
        wrapped = [self.python, "-I", "-S", LAUNCHER, *landlock.launcher_args(spec), "--", *argv]
        return ConfinedCommand(wrapped, confined_env(temp, base=env, pass_env=pass_env, extra=extra_env,
                                            hidden=[*hidden, "/tmp"]), cwd, policy, backend, temp)


def landlock_spec(policy: SandboxPolicy, hidden: list[str], temp: str, abi: int) -> dict:
    """Read: everything but the secrets and the shared /tmp (other sessions' files live there); the
    workspace always (it may sit under a hidden path). Write: the workspace (minus secrets inside it) and
    the private temp dir under ``workspace-write``; ``/dev/null`` always."""
    ws = policy.workspace_root
    shut = [*hidden, os.path.realpath(tempfile.gettempdir()), "/tmp"]
    inside = [h for h in shut if is_within(h, ws) and h != ws]
    read = [r for r in readable_subtrees("/", shut) if r != "/proc"] + proc_without_processes()
    read += readable_subtrees(ws, inside) + list(policy.readable)
    write = ["/dev/null"]
    if policy.mode == WORKSPACE_WRITE:
        write += readable_subtrees(ws, inside) + [temp]
    else:
        read.append(temp)
    return {"read": read, "write": write, "network": policy.network, "abi": abi}


def proc_without_processes() -> list[str]:
    """/proc's entries but no process's directory: Landlock does not stop a confined process from
    reading a same-user process's ``/proc/<pid>/environ`` (only ``mem`` and the like), so those are
    left out of the grants; the launcher grants the confined process its own (``/proc/<pid>``)."""
    try:
        with os.scandir("/proc") as entries:
            return [e.path for e in entries if not e.name.isdigit() and not e.is_symlink()]
    except OSError:
        return []


def chain_from_env() -> tuple[str, ...]:
    raw = os.environ.get(BACKENDS_ENV, "").strip()
    if not raw:
        return BACKENDS
    if raw == "none":
        return ()
    return tuple(part.strip() for part in raw.split(",") if part.strip())
