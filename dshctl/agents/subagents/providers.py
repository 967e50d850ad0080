"""The in-process providers: ``spawn`` (a fresh child) and ``fork`` (seeded with the parent's completed
turns). Both support every start-time capability and continuable children (``prepare_continuable``)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from . import outcome
from .child import completed_turn_prefix, create_child

CAPABILITIES = {"outputSchema": False, "depthLimit": True, "toolFilter": True, "persona": True}


@dataclass
class SubagentRun:
    """One published one-shot child: ``result`` (awaitable dict) and ``dispose()`` (idempotent)."""
    id: str
    local_agent: object
    result: asyncio.Future
    _cancelled: dict = field(default_factory=lambda: {"flag": False})

    async def dispose(self) -> None:
        self._cancelled["flag"] = True
        agent = self.local_agent
        await agent.ctx.agents.close(agent.id)
        await asyncio.gather(self.result, return_exceptions=True)


def drive(child, prompt: list[dict], signal: asyncio.Event | None, gate: asyncio.Semaphore | None) -> SubagentRun:
    boundary = len(child.session.events)
    cancelled = {"flag": False}

    async def run() -> dict:
        async with gate_for(child, gate):
            if not (signal is not None and signal.is_set()):
                child.followup(prompt)
                watcher = asyncio.ensure_future(_abort_on(signal, child, cancelled)) if signal else None
                try:
                    await child.when_idle()
                finally:
                    if watcher is not None:
                        watcher.cancel()
            else:
                cancelled["flag"] = True
        own = child.session.events[boundary:]
        return {"output": outcome.final_output(own),
                "stopReason": outcome.run_stop_reason(own, cancelled["flag"])}

    return SubagentRun(child.id, child, asyncio.ensure_future(run()), cancelled)


async def _abort_on(signal: asyncio.Event, child, cancelled: dict) -> None:
    await signal.wait()
    cancelled["flag"] = True
    child.abort({"kind": "parent"})


def gate_for(child, gate: asyncio.Semaphore | None):
    """The concurrency bound holds for a root's children only: a deeper child runs on its parent's
    slot, so parents waiting for their own children can never hold every slot and starve them."""
    deep = int((child.options or {}).get("subagentDepth") or 1) > 1
    return _NoGate() if gate is None or deep else gate


class _NoGate:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


class InProcessProvider:
    capabilities = CAPABILITIES

    def __init__(self, name: str, *, fork: bool, gate: asyncio.Semaphore | None = None):
        self.name = name
        self.inherits_parent_context = fork
        self.gate = gate

    def seed_of(self, parent) -> list[dict] | None:
        return (completed_turn_prefix(parent) or None) if self.inherits_parent_context else None

    async def start(self, request: dict) -> SubagentRun:
        signal = request.get("signal")
        if signal is not None and signal.is_set():
            raise RuntimeError("subagent request was aborted before child publication")
        parent = request["parent"]
        child = await create_child(parent, request, request["descriptor"], seed=self.seed_of(parent),
                                   max_depth=request.get("maxDepth"))
        return drive(child, request["prompt"], signal, self.gate)

    async def prepare_continuable(self, request: dict) -> dict:
        seed = self.seed_of(request["parent"])
        return {"seed": seed} if seed else {}
