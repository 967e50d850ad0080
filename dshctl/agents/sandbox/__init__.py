"""The sandbox (docs/sandbox.md): dsh's ``ctx.sandbox.confine(argv, policy)`` seam, its three modes and
the fail-closed ``SANDBOX_UNAVAILABLE``, with bubblewrap then Landlock as backends."""
from .policy import (DANGER_FULL_ACCESS, READ_ONLY, SANDBOX_MODES, SANDBOX_UNAVAILABLE, WORKSPACE_WRITE,
                     SandboxPolicy, SandboxUnavailableError)
from .service import ConfinedCommand, ConfinedProcess, SandboxService

__all__ = ["DANGER_FULL_ACCESS", "READ_ONLY", "SANDBOX_MODES", "SANDBOX_UNAVAILABLE", "WORKSPACE_WRITE",
           "SandboxPolicy", "SandboxUnavailableError", "ConfinedCommand", "ConfinedProcess", "SandboxService"]
