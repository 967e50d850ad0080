"""``ctx.sandboxPolicy`` (dsh's ``dsh-sandbox-policy``): one resolved mode + workspace root per call.

An approved escalation outranks the session's last ``sandbox/mode`` event, which outranks the
configured default (``read-only``, dsh's fail-safe). The root is the session's cwd (its header,
immutable), else the configured fallback. Bash, Code Mode and the fs tools read the same answer here,
so they cannot drift into different worlds.
"""
from __future__ import annotations

import os

from .policy import SANDBOX_MODES, SandboxPolicy, canonical, fold_sandbox_mode, policy_context


class SandboxPolicyService:
    def __init__(self, default_mode: str = "read-only", workspace_root: str | None = None):
        if default_mode not in SANDBOX_MODES:
            raise ValueError(f'unknown sandbox mode "{default_mode}"')
        self.default_mode = default_mode
        self.workspace_root = canonical(workspace_root or os.getcwd())

    def mode_of(self, session) -> str:
        return fold_sandbox_mode(session.events) or self.default_mode

    def resolve(self, session=None, mode: str | None = None, **extra) -> SandboxPolicy:
        effective = mode or (self.mode_of(session) if session is not None else self.default_mode)
        cwd = (getattr(session, "header", None) or {}).get("cwd") if session is not None else None
        return SandboxPolicy(effective, cwd or self.workspace_root,
                             session_id=getattr(session, "id", None), **extra)

    def set_mode(self, agent, mode: str) -> None:
        """THE write path of a session's override: one ``sandbox/mode`` event."""
        if mode not in SANDBOX_MODES:
            raise ValueError(f'unknown sandbox mode "{mode}" (one of {", ".join(SANDBOX_MODES)})')
        agent.append("sandbox/mode", {"mode": mode})

    def context_text(self, session) -> str:
        return policy_context(self.resolve(session))
