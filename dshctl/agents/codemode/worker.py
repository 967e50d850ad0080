"""The worker process: one fresh ``python3`` per run, and the guarantee that nothing of it outlives the run.

Spawn: ``-I -S`` (no user site, no site-packages, no ``PYTHON*`` variables), the channel passed as the
only inherited descriptor (``close_fds``), its own session and process group, a scrubbed environment, a
scratch working directory, stdin on ``/dev/null``, stdout/stderr on pipes the host reads — all of it
inside the sandbox (``ctx.sandbox.confine``): by default ``workspace-write`` with the scratch directory
as the workspace and no network, so the program writes only its scratch and temp, and reads none of
the host's secrets or its ``/proc/<pid>/environ``. The worker caps itself from the ``boot`` frame
before any model code runs (``child.py``).

Kill: the confined tree first (bwrap: its PID namespace dies with it; Landlock: the launcher kills
every descendant, ``setsid`` ones too), then SIGKILL to the group, reap through a pidfd, then make sure
no other process still holds the worker's end of the channel (the last net, and the only one under
``danger-full-access``, where a program that forks, leaves the group *and* closes its descriptors
still escapes — docs/codemode.md).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD_SCRIPT = str(Path(__file__).with_name("child.py"))
SCRUBBED_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
# Exit codes above this are a runner's report of a child killed by signal (128 + N, bwrap and ours).
SIGNAL_EXIT_BASE = 128


def interpreter_paths(python: str) -> tuple[str, tuple[str, ...]]:
    """The real interpreter to run (not a venv's symlink) and what the sandbox must let it read even
    when it is installed under a hidden path (pyenv in the home): its prefix, and this package."""
    real = os.path.realpath(python)
    prefix = os.path.dirname(os.path.dirname(real))          # <prefix>/bin/python3 -> <prefix>
    return real, (prefix, os.path.dirname(os.path.realpath(CHILD_SCRIPT)))


class WorkerProcess:
    """A started worker: ``channel`` (host end of the socketpair), ``stdout``/``stderr`` fds, ``pidfd``."""

    def __init__(self, python: str | None = None, sandbox=None, mode: str = "workspace-write",
                 network: bool = False):
        from dshctl.agents.sandbox import SandboxPolicy
        from dshctl.agents.sandbox.service import default_service

        self.scratch = tempfile.mkdtemp(prefix=f"dshctl-code-{os.getpid()}-")
        self.confined = None
        try:
            real, readable = interpreter_paths(python or sys.executable)
            policy = SandboxPolicy(mode, self.scratch, network=network, readable=readable)
            # raises SandboxUnavailableError (nothing spawned) when no backend runs here
            self.command = (sandbox or default_service()).confine(
                [real, "-I", "-S", "-X", "utf8", CHILD_SCRIPT], policy, env=dict(SCRUBBED_ENV))
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._their_inode = os.fstat(theirs.fileno()).st_ino
        self.command.argv.append(str(theirs.fileno()))
        try:
            self.confined = self.command.spawn(
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),), close_fds=True, start_new_session=True)
            self.proc = self.confined.proc
        except BaseException:
            self.channel.close()
            self.command.cleanup()
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        finally:
            theirs.close()
        self.pidfd = os.pidfd_open(self.proc.pid)
        self.channel.setblocking(False)
        for stream in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(stream.fileno(), False)
        self.returncode: int | None = None
        self.closed = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._as_python_code(self.proc.poll())
        return self.returncode

    def _as_python_code(self, code: int | None) -> int | None:
        """A runner reports its child's death by signal N as exit 128 + N; say it as Python does (-N)."""
        if code is not None and self.command.backend.name != "none" and SIGNAL_EXIT_BASE < code < 192:
            return SIGNAL_EXIT_BASE - code
        return code

    def cpu_seconds_used(self) -> float:
        """User + system CPU time of the process we spawned and the children it reaped — the worker,
        when a runner (bwrap, the Landlock launcher) stands between (readable while it is a zombie)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """Kill the group and every holder of the channel, reap, release every descriptor. Idempotent;
        synchronous (SIGKILL is not negotiable), so it also runs from cancellation and unload."""
        if self.closed:
            return
        self.closed = True
        self.returncode = self._as_python_code(self.confined.kill_tree())   # the group, the namespace
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)     # the group id is the runner's pid (setsid)
        except (ProcessLookupError, PermissionError):
            pass
        if not self._channel_hangs_up():
            self._kill_channel_holders()
        for resource in (self.proc.stdout, self.proc.stderr):
            resource.close()
        self.channel.close()
        os.close(self.pidfd)
        shutil.rmtree(self.scratch, onerror=_force_remove)

    def _channel_hangs_up(self, wait: float = 0.05) -> bool:
        """True once every other holder of the worker's end is gone (we read EOF)."""
        deadline = time.monotonic() + wait
        while True:
            try:
                while self.channel.recv(1 << 16):
                    pass
                return True
            except (BlockingIOError, InterruptedError):
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.002)
            except OSError:
                return True

    def _kill_channel_holders(self) -> None:
        target = f"socket:[{self._their_inode}]"
        for _ in range(5):
            holders = processes_holding(target)
            if not holders:
                return
            for pid in holders:
                for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                    try:
                        kill()
                    except (ProcessLookupError, PermissionError):
                        pass
            time.sleep(0.01)


def processes_holding(link_target: str) -> list[int]:
    """Pids (not ours) with a descriptor whose ``/proc`` link reads ``link_target``."""
    found, me = [], os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == link_target:
                        found.append(int(entry.name))
                        break
                except OSError:
                    continue
    return found


def _force_remove(function, path, _exc_info) -> None:
    """A program may leave read-only directories behind; make them writable and try once more."""
    try:
        os.chmod(os.path.dirname(path), 0o700)
        os.chmod(path, 0o700)
        function(path)
    except OSError:
        pass
