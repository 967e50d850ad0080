"""The worker process: one fresh ``python3`` per run, and the guarantee that nothing of it outlives the run.

Spawn: ``-I -S`` (no user site, no site-packages, no ``PYTHON*`` variables), the channel passed as the
only inherited descriptor (``close_fds``), its own session and process group, a scrubbed environment, a
scratch working directory, stdin on ``/dev/null``, stdout/stderr on pipes the host reads. The worker
caps itself from the ``boot`` frame before any model code runs (``child.py``).

Kill: SIGKILL to the whole process group, reap the worker (through a pidfd, so no watcher thread), then
make sure no other process still holds the worker's end of the channel — a program that forked and
called ``setsid`` has left the group, and is found by its open channel socket in ``/proc`` and killed.
A program that forks, leaves the group *and* closes its inherited descriptors escapes both nets; that
needs a cgroup (docs/codemode.md says so).
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
SCRUBBED_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "HOME": "/nonexistent"}


class WorkerProcess:
    """A started worker: ``channel`` (host end of the socketpair), ``stdout``/``stderr`` fds, ``pidfd``."""

    def __init__(self, python: str | None = None):
        self.scratch = tempfile.mkdtemp(prefix=f"dshctl-code-{os.getpid()}-")
        self.channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._their_inode = os.fstat(theirs.fileno()).st_ino
        env = dict(SCRUBBED_ENV, TMPDIR=self.scratch)
        try:
            self.proc = subprocess.Popen(
                [python or sys.executable, "-I", "-S", "-X", "utf8", CHILD_SCRIPT, str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),), close_fds=True, start_new_session=True,
                cwd=self.scratch, env=env)
        except BaseException:
            self.channel.close()
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
            self.returncode = self.proc.poll()
        return self.returncode

    def cpu_seconds_used(self) -> float:
        """User + system CPU time of the worker (readable while it is a zombie, gone once reaped)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """Kill the group and every holder of the channel, reap, release every descriptor. Idempotent;
        synchronous (SIGKILL is not negotiable), so it also runs from cancellation and unload."""
        if self.closed:
            return
        self.closed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)     # the group id is the worker's pid (setsid)
        except (ProcessLookupError, PermissionError):
            pass
        self.returncode = self.proc.wait()
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
