"""The bubblewrap profile for one policy (Debian's ``bubblewrap``, the ``bwrap`` tool).

A new mount namespace sees the host's ``/`` read-only; the secrets are covered (an empty read-only tmpfs
over a directory, ``/dev/null`` over a file); ``/tmp`` is a private tmpfs (writable under
``workspace-write``, empty and read-only under ``read-only``); the workspace is bound back (read-write
or read-only by mode). A new PID namespace with its own ``/proc`` shows none of the host's processes,
and every process in it dies when its first process does, or when the host does
(``--die-with-parent``). ``--new-session`` keeps the terminal out of reach (no TIOCSTI); without the
network, ``--unshare-net`` leaves only a private loopback.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from .hidden import is_within
from .policy import WORKSPACE_WRITE, SandboxPolicy

DENIAL_SIGNATURES = ("read-only file system", "permission denied")
RUNNER_FAILURE_SIGNATURES = ("bwrap: ",)
PRIVATE_TMP = "/tmp"


def profile_args(policy: SandboxPolicy, hidden: list[str], cwd: str) -> list[str]:
    ws, writable = policy.workspace_root, policy.mode == WORKSPACE_WRITE
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--proc", "/proc",
            "--die-with-parent", "--new-session"]
    if not policy.network:
        args.append("--unshare-net")
    remounts: list[str] = []          # read-only remounts last: binds below them need their mountpoints
    for path in (h for h in hidden if not is_within(h, ws) and not is_within(h, PRIVATE_TMP)):
        args += _hide(path, remounts)
    args += ["--tmpfs", PRIVATE_TMP]
    if not writable:
        remounts.append(PRIVATE_TMP)
    args += ["--bind" if writable else "--ro-bind", ws, ws]
    for path in (h for h in hidden if is_within(h, ws) and h != ws):
        args += _hide(path, remounts)
    for path in policy.readable:
        if os.path.lexists(path):
            args += ["--ro-bind", path, path]
    for path in remounts:
        args += ["--remount-ro", path]
    return args + ["--chdir", cwd]


def _hide(path: str, remounts: list[str]) -> list[str]:
    if os.path.isdir(path):
        remounts.append(path)
        return ["--tmpfs", path]
    if os.path.lexists(path):
        return ["--ro-bind", "/dev/null", path]
    return []


def probe(timeout: float) -> str | None:
    """None when bwrap builds a namespace with our profile's parts here, else why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed"
    try:
        done = subprocess.run([exe, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-ipc",
                               "--proc", "/proc", "--die-with-parent", "--new-session", "--unshare-net",
                               "--tmpfs", "/tmp", "--remount-ro", "/tmp", "--", "true"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    if done.returncode != 0:
        return done.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if done.stderr else \
            f"bwrap exited {done.returncode}"
    return None
