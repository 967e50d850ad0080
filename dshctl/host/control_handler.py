"""What the host answers on its control socket (the protocol is in docs/host.md)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host


async def handle(host: "Host", request: dict) -> dict:
    try:
        return await _handle(host, request)
    except Exception as exc:  # noqa: BLE001 - the client gets an answer, never a dropped connection
        host.log.event("control/error", f"{request.get('op')}: {type(exc).__name__}: {exc}", level="error")
        return {"ok": False, "error": f"internal error: {type(exc).__name__}: {exc}"}


async def _handle(host: "Host", request: dict) -> dict:
    op = request.get("op")
    if op == "ping":   # keyEnv: the variable the llm row reads its key from (a client may lend its own)
        key_env = getattr(host.root.get("llm"), "key_env", None) if host.root is not None else None
        return {"ok": True, "pid": os.getpid(), **({"keyEnv": key_env} if isinstance(key_env, str) else {})}
    if op == "status":
        return {"ok": True, "status": await host.settled_status()}
    if op == "reload":
        trial = request.get("trial")
        if trial is not None and (isinstance(trial, bool) or not isinstance(trial, (int, float))):
            return {"ok": False, "error": '"trial" must be a number of seconds'}
        outcome = await (host.trials.start(float(trial), "control") if trial is not None
                         else host.reloader.reload("control"))
        return {"ok": True, "outcome": outcome.to_json()}
    if op == "confirm":
        return {"ok": True, "outcome": (await host.trials.confirm()).to_json()}
    if op == "agent.run":
        from .agent_ops import TurnStream
        return TurnStream(host, request)
    return {"ok": False, "error": f"unknown op {op!r} (expected reload, confirm, status, ping or agent.run)"}
