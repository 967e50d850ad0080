"""``@dshctl/sandbox``: provides ``ctx.sandbox`` (dsh's ``@deepseek-ai/dsh-sandbox-local`` seam).

A row chooses the backend chain and the probe's time limit; without a row, consumers use the
process's own provider (same chain, from ``DSHCTL_SANDBOX_BACKENDS``). The probe runs at the first
confined call, once per row. The row also provides ``ctx.sandboxPolicy`` (the default mode, dsh's
``read-only``, and the fallback workspace root).
"""
from __future__ import annotations

from .resolve import SandboxPolicyService
from .service import SandboxService

name = "@dshctl/sandbox"
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "backends": {"type": "array", "items": {"enum": ["bwrap", "landlock"]}},
    "probeTimeoutMs": {"type": "integer", "minimum": 1, "default": 5000},
    "mode": {"enum": ["read-only", "workspace-write", "danger-full-access"], "default": "read-only"},
    "workspaceRoot": {"type": "string"},
}}


def apply(ctx, config):
    ctx.provide("sandbox", SandboxService(config.get("backends"), config["probeTimeoutMs"] / 1000))
    ctx.provide("sandboxPolicy", SandboxPolicyService(config["mode"], config.get("workspaceRoot")))
