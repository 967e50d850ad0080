"""Calls from a program into the agent's tools: the same pipeline and concurrency contract as direct calls.

Each ``await tools.name(args)`` becomes one ``dispatch(agent, call, turn=, step=, origin="code")`` —
``tools/pre-execute`` → the built-in guard → ``tools/execute`` → ``tools/post-execute`` — with the call
id ``<run_code id>:code:<n>``. Scheduling follows the loop's rules (dsh shares the contract, not the
machinery): calls start strictly in submission order; the tool's ``isConcurrencySafe(args)`` is asked
when the call is submitted; safe calls overlap up to ``max_parallel`` unless their footprints collide; any
other call waits for the pool to drain and runs alone.

Logging (dsh's events, outside the model's history): ``tool/code-dispatch-start`` when a call starts and
``tool/code-dispatch`` with the rendered result when it settles — every started call settles exactly
once, even when the run ends under it. Only the outer ``run_code`` result enters the conversation.
"""
from __future__ import annotations

import asyncio
import copy
import json
from typing import Any, Awaitable, Callable

from dshctl.agents.tools.definition import conflict

Dispatch = Callable[..., Awaitable[dict]]


class RunOver(Exception):
    """The run settled: nothing more is dispatched for it."""


def result_value(result: dict) -> Any:
    """What a successful call resolves to in the program: the tool's structured ``value`` when it gives
    one, else its text (text blocks joined)."""
    if "value" in result:
        return result["value"]
    return "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def result_message(result: dict) -> str:
    error = result.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return result_value(result) or "tool call failed"


class SubCallBridge:
    """One run's sub-calls. ``binding(name)`` is the host function the worker's ``tools.name`` calls."""

    def __init__(self, agent, parent_call_id: str, *, turn: int, step: int, dispatch: Dispatch,
                 classify: Callable[[str, Any], tuple[bool, list]], max_parallel: int = 10):
        self.agent, self.parent, self.turn, self.step = agent, parent_call_id, turn, step
        self.dispatch, self.classify, self.max_parallel = dispatch, classify, max_parallel
        self.count = 0
        self.running: dict[int, tuple[bool, list]] = {}    # n -> (parallel, footprint)
        self.queue: list[int] = []                          # submission order of calls not started
        self.changed = asyncio.Condition()
        self.over = False

    def binding(self, name: str) -> Callable[[Any], Awaitable[Any]]:
        async def call(args: Any) -> Any:
            return await self.submit(name, args)
        return call

    async def submit(self, name: str, args: Any) -> Any:
        if self.over:
            raise RunOver(f"run_code run is over; {name} not dispatched")
        self.count += 1
        n = self.count
        sub_id = f"{self.parent}:code:{n}"
        parallel, footprint = self.classify(name, args)
        async with self.changed:
            self.queue.append(n)
            try:
                await self.changed.wait_for(lambda: self.over or self._may_start(n, parallel, footprint))
            finally:
                self.queue.remove(n)
            if self.over:
                raise RunOver(f"run_code run is over; {name} tool call abandoned")
            self.running[n] = (parallel, footprint)
            self.changed.notify_all()   # the next in line may join this parallel group
        logged = copy.deepcopy(args)
        self._log("tool/code-dispatch-start", {"rootCallId": self.parent, "parentCallId": self.parent,
                                               "subCallId": sub_id, "name": name, "arguments": logged})
        # What the settle event records if the run ends while the call is still running (it is cancelled).
        result: dict = {"content": [{"type": "text", "text": f"Error: {name} was cancelled: the run ended"}],
                        "isError": True}
        try:
            result = await self.dispatch(self.agent, {"id": sub_id, "name": name,
                                                      "arguments": json.dumps(args, ensure_ascii=False)},
                                         turn=self.turn, step=self.step, origin="code")
        finally:
            self._log("tool/code-dispatch", {"rootCallId": self.parent, "parentCallId": self.parent,
                                             "subCallId": sub_id, "name": name, "arguments": logged,
                                             "isError": bool(result.get("isError")),
                                             "content": result.get("content", [])})
            async with self.changed:
                del self.running[n]
                self.changed.notify_all()
        if result.get("isError"):
            raise RuntimeError(result_message(result))
        return result_value(result)

    def _may_start(self, n: int, parallel: bool, footprint: list) -> bool:
        if self.queue[0] != n:
            return False                # strictly in submission order
        if not self.running:
            return True
        if not parallel or len(self.running) >= self.max_parallel:
            return False
        return all(p and not conflict(footprint, f) for p, f in self.running.values())

    async def close(self) -> None:
        """Abandon calls not started; started ones settle (and log) as their tasks end."""
        self.over = True
        async with self.changed:
            self.changed.notify_all()

    def _log(self, kind: str, data: dict) -> None:
        append = getattr(self.agent, "append", None)
        if append is not None:
            append(kind, data)
