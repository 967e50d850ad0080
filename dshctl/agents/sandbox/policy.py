"""The sandbox vocabulary dsh defines (``packages/sandbox/sandbox``): the three modes, one resolved policy
per call, the fail-closed ``SANDBOX_UNAVAILABLE`` error, the escalation ladder and the marker lines the
model sees. Pure: no processes, no files beyond resolving a path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

READ_ONLY, WORKSPACE_WRITE, DANGER_FULL_ACCESS = "read-only", "workspace-write", "danger-full-access"
SANDBOX_MODES = (READ_ONLY, WORKSPACE_WRITE, DANGER_FULL_ACCESS)
SANDBOX_UNAVAILABLE = "SANDBOX_UNAVAILABLE"

# What a call whose mode is the key may escalate to (dsh's WIDER_MODES); read-only is the floor.
WIDER_MODES = {READ_ONLY: (WORKSPACE_WRITE, DANGER_FULL_ACCESS), WORKSPACE_WRITE: (DANGER_FULL_ACCESS,)}
ESCALATION_TARGETS = (WORKSPACE_WRITE, DANGER_FULL_ACCESS)


class SandboxUnavailableError(RuntimeError):
    """A confined mode was asked for and nothing here can enforce it: the command never runs."""

    code = SANDBOX_UNAVAILABLE

    def __init__(self, mode: str, detail: str | None = None):
        # dsh's text, word for word (its model-facing error), then our runner detail when there is one.
        message = (f'sandbox mode "{mode}" is requested but no sandbox backend is usable on this host; '
                   "refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing "
                   "kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL "
                   "restricted-token runner can start (Windows) — otherwise switch the consumer to "
                   "danger-full-access.")
        if detail is not None:
            message += f" Runner failure: {detail}"
        super().__init__(message)
        self.mode, self.detail, self.message = mode, detail, message


def canonical(path: str | os.PathLike) -> str:
    """The path the kernel compares: symlinks resolved before ``..`` (as ``chdir`` lands)."""
    return os.path.realpath(os.fspath(path))


@dataclass(frozen=True)
class SandboxPolicy:
    """What one execution may touch — per call, never fixed on the provider.

    ``mode`` and ``workspace_root`` are dsh's ``SandboxExecutionPolicy``. ``network`` is ours: dsh's
    modes say nothing about the network (it stays open there); a consumer that must not reach it
    (Code Mode's worker) sets it False. ``hide`` adds paths to the secrets a confined process never
    reads (docs/sandbox.md lists the built-in ones); ``readable`` names paths it must read even where
    they sit under a hidden one (an interpreter installed in the home, say), read-only.
    """

    mode: str
    workspace_root: str
    session_id: str | None = None
    network: bool = True
    hide: tuple[str, ...] = field(default=())
    readable: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if self.mode not in SANDBOX_MODES:
            raise ValueError(f'unknown sandbox mode "{self.mode}" (one of {", ".join(SANDBOX_MODES)})')
        object.__setattr__(self, "workspace_root", canonical(self.workspace_root))
        object.__setattr__(self, "hide", tuple(canonical(p) for p in self.hide))
        object.__setattr__(self, "readable", tuple(canonical(p) for p in self.readable))

    @property
    def confined(self) -> bool:
        return self.mode != DANGER_FULL_ACCESS

    def with_mode(self, mode: str) -> "SandboxPolicy":
        """An approved escalation: the same call, root and session, a wider mode."""
        return replace(self, mode=mode)


def fold_sandbox_mode(events) -> str | None:
    """The session's override: the mode of its last ``sandbox/mode`` event, or None (dsh's fold)."""
    for event in reversed(list(events)):
        if _type(event) == "sandbox/mode":
            mode = _data(event).get("mode")
            return mode if mode in SANDBOX_MODES else None
    return None


def _type(event) -> str | None:
    return event.get("type") if isinstance(event, dict) else getattr(event, "type", None)


def _data(event) -> dict:
    data = event.get("data") if isinstance(event, dict) else getattr(event, "data", None)
    return data if isinstance(data, dict) else {}


def policy_context(policy: SandboxPolicy) -> str:
    """The runtime-context sentence dsh's ``sandbox:policy`` contribution gives the model (its text)."""
    if policy.mode == READ_ONLY:
        return ("Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox "
                "cannot modify files in the standing mode. Do not refuse a required modification from this "
                "policy alone: try an available tool normally and follow any denial and escalation guidance "
                "it returns.")
    if policy.mode == WORKSPACE_WRITE:
        import json
        return ("Current DSH file policy: workspace-write. Any available operation enforced by the DSH file "
                "sandbox may modify files under the session workspace: "
                f"{json.dumps(policy.workspace_root)}. Some platform temporary areas may also be writable.")
    return ("Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file "
            "modifications by available operations.")


def denial_marker(mode: str) -> str:
    """The line a denied file effect adds to the tool result (dsh's marker)."""
    return f"[sandbox: file access denied under {mode} mode]"


def escalation_hint(subject: str) -> str:
    return (f"[sandbox: escalation available — retry this exact {subject} once with sandbox_permissions "
            "(the narrowest wider mode that suffices) + justification; the approval prompt asks the user]")


def validate_escalation_args(sandbox_permissions, justification) -> None:
    """The pairing a schema cannot express (dsh's texts): both or neither, and a real sentence."""
    if sandbox_permissions is not None and justification is None:
        raise ValueError("invalid escalation: sandbox_permissions requires a justification")
    if justification is not None and sandbox_permissions is None:
        raise ValueError("invalid escalation: justification is only valid together with sandbox_permissions")
    if justification is not None and not str(justification).strip():
        raise ValueError("invalid justification: expected a non-empty sentence")


def check_widening(requested: str, effective: str) -> None:
    if requested not in WIDER_MODES.get(effective, ()):
        raise ValueError(f'sandbox escalation to "{requested}" is not strictly wider than this call\'s '
                         f'current "{effective}" mode')
