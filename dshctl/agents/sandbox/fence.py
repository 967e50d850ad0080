"""The in-process fence the file tools apply with the same policy the kernel enforces on processes
(dsh's ``dsh-fs-sandbox``): ``read-only`` refuses every write, ``workspace-write`` refuses a write whose
canonical target (symlinks resolved now, through the deepest existing ancestor) is not under the
workspace, ``danger-full-access`` lets it through. Reads of the host's secrets are refused in every
confined mode, as the process backends hide them."""
from __future__ import annotations

import os

from .hidden import is_within, secret_paths
from .policy import DANGER_FULL_ACCESS, READ_ONLY, SandboxPolicy, canonical

FS_SANDBOX_DENIED = "FS_SANDBOX_DENIED"


class FsSandboxDenied(PermissionError):
    code = FS_SANDBOX_DENIED

    def __init__(self, message: str, mode: str):
        super().__init__(message)
        self.message, self.mode = message, mode


def checked_write_target(policy: SandboxPolicy, path: str, shown: str | None = None) -> str:
    """The canonical path a write must use (check and write the same identity), or FsSandboxDenied with
    dsh's text."""
    shown = shown or path
    if policy.mode == DANGER_FULL_ACCESS:
        return os.path.abspath(path)
    if policy.mode == READ_ONLY:
        raise FsSandboxDenied(f'cannot write "{shown}": file access denied under read-only mode', policy.mode)
    target = canonical(path)
    inside = is_within(target, policy.workspace_root) and \
        not any(is_within(target, h) for h in secret_paths(policy.hide) if is_within(h, policy.workspace_root)
                and h != policy.workspace_root)
    if not inside:
        raise FsSandboxDenied(f'cannot write "{shown}": file access denied under {policy.mode} mode', policy.mode)
    return target


def checked_read_target(policy: SandboxPolicy, path: str, shown: str | None = None) -> str:
    """The canonical path a read may use: anything but the host's secrets (unless it is the workspace)."""
    target = canonical(path)
    if policy.mode == DANGER_FULL_ACCESS or is_within(target, policy.workspace_root):
        return target
    if any(is_within(target, h) for h in secret_paths(policy.hide)):
        raise FsSandboxDenied(f'cannot read "{shown or path}": file access denied under {policy.mode} mode',
                              policy.mode)
    return target
