"""The sandbox (docs/sandbox.md): dsh's ``ctx.sandbox.confine(argv, policy)`` seam, its three modes and
the fail-closed ``SANDBOX_UNAVAILABLE``, with bubblewrap then Landlock as backends.

``policy`` (modes, the per-call policy, dsh's texts), ``hidden`` (the host's secrets and the grants
that leave them out), ``env`` (the allow-listed environment), ``bwrap`` (its profile and probe),
``landlock`` (the kernel's system calls through ctypes), ``launcher`` (the Landlock runner, a script),
``service`` (``confine``, the probed chain, spawn and kill), ``resolve`` (``ctx.sandboxPolicy``),
``plugin`` (``@dshctl/sandbox``).

May import ``core`` and the standard library only; ``landlock.py`` and ``launcher.py`` only the
standard library (the launcher runs them with ``-I -S``).
"""
from .policy import (DANGER_FULL_ACCESS, READ_ONLY, SANDBOX_MODES, SANDBOX_UNAVAILABLE, WORKSPACE_WRITE,
                     SandboxPolicy, SandboxUnavailableError)
from .service import ConfinedCommand, ConfinedProcess, SandboxService

__all__ = ["DANGER_FULL_ACCESS", "READ_ONLY", "SANDBOX_MODES", "SANDBOX_UNAVAILABLE", "WORKSPACE_WRITE",
           "SandboxPolicy", "SandboxUnavailableError", "ConfinedCommand", "ConfinedProcess", "SandboxService"]
