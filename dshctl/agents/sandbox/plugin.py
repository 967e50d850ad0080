"""``@dshctl/sandbox``: provides ``ctx.sandbox`` (dsh's ``@deepseek-ai/dsh-sandbox-local`` seam).

A row chooses the backend chain and the probe's time limit; without a row, consumers use the
process's own provider (same chain, from ``DSHCTL_SANDBOX_BACKENDS``). The probe runs at the first
confined call, once per row.
"""
from __future__ import annotations

from .service import SandboxService

name = "@dshctl/sandbox"
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "backends": {"type": "array", "items": {"enum": ["bwrap", "landlock"]}},
    "probeTimeoutMs": {"type": "integer", "minimum": 1, "default": 5000},
}}


def apply(ctx, config):
    ctx.provide("sandbox", SandboxService(config.get("backends"), config["probeTimeoutMs"] / 1000))
