"""A turn and its steps, with dsh's events (architecture-notes.md, "The agent loop").

turn/start → [agent/pre-step (waterfall; reject = zero-step turn) → step/start → user/message… →
agent/request (waterfall: the call config) → request/header when it changed → llm/stream (waterfall
around the adapter) → assistant/chunk… → assistant/message → tool calls (scheduler.py) → step/end →
agent/turn-stopping (serial)]… → turn/end. The reason is completed, max-tokens (sticky: once a step hit
the limit the turn ends so even if later steps complete), aborted {reason: cause}, blocked, error
{error: failure} — and interrupted, which only the restore pipeline writes for a turn a crash cut.

``agent/turn-stopping`` runs at every step end with ``stopping`` saying whether the turn is about to
close. A listener continues a closing turn by steering; it stops a continuing one by returning
``{"kind": "stop", "reason": "…"}`` — the turn then ends ``aborted`` with cause ``{"kind": "hook",
"reason"}``, dsh's cause for a hook's cancellation (docs/agents.md, "Decisions").
"""
from __future__ import annotations

import asyncio

from dshctl.agents.tools.hooks import serial, waterfall

from .step import TurnAborted, run_step

_ENTER = "enter"
_RUNNING: set = set()     # the agents running a turn in this process (see commit)


async def run_turn(agent) -> None:
    _RUNNING.add(agent)
    try:
        await _run_turn(agent)
    finally:
        _RUNNING.discard(agent)


async def _run_turn(agent) -> None:
    turn = agent.last_turn + 1
    agent.last_turn = turn
    agent.append("turn/start", {"turn": turn})
    ends: dict | None = None
    step = 0
    target = "next-turn"
    try:
        while True:
            _check(agent)
            claimed = agent.inbox.claim(target)
            decision = await waterfall(
                agent.ctx, "agent/pre-step", {"agent": agent, "messages": claimed, "turn": turn, "step": step + 1,
                                   "signal": agent.abort_event},
                default=lambda: {"kind": _ENTER, "messages": claimed})
            _check(agent)
            if not isinstance(decision, dict) or decision.get("kind") != _ENTER:
                ends = {"kind": "blocked"}
                break
            messages = list(decision.get("messages") or [])
            if ends is not None and not messages:
                break
            if step == 0 and not messages:
                ends = {"kind": "completed"}
                break
            step += 1
            agent.append("step/start", {"turn": turn, "step": step})
            try:
                for message in messages:
                    agent.append("user/message", message, surfaceOp="append")
                if step == 1:
                    await commit(agent)      # the input survives a crash mid-turn (restore closes it)
                step_end = await run_step(agent, turn, step)
            finally:
                agent.append("step/end", {"turn": turn, "step": step})
            if ends is None or ends["kind"] != "max-tokens":
                ends = step_end
            _check(agent)
            verdict = await serial(
                agent.ctx, "agent/turn-stopping", {"agent": agent, "turn": turn, "step": step,
                                        "stopping": ends is not None and not agent.inbox.next_step,
                                        "reason": ends, "signal": agent.abort_event})
            _check(agent)
            if isinstance(verdict, dict) and verdict.get("kind") == "stop":
                ends = {"kind": "aborted", "reason": {"kind": "hook",
                                                      "reason": str(verdict.get("reason") or "stopped")}}
                break
            if ends is not None and not agent.inbox.next_step:
                break
            target = "next-step"
    except TurnAborted:
        ends = {"kind": "aborted", "reason": agent.abort_cause or {"kind": "user"}}
    except asyncio.CancelledError:
        ends = {"kind": "aborted", "reason": {"kind": "disposed"}}
        raise
    except Exception as exc:  # noqa: BLE001 - a turn ends with the reason; the driver never dies
        ends = {"kind": "error", "error": failure_of(exc)}
        agent.ctx.emit("agent/error", {"agent": agent, "turn": turn, "step": step, "error": exc})
    finally:
        agent.append("turn/end", {"turn": turn, "reason": ends or {"kind": "completed"}})
        if ends is not None and ends.get("reason") == {"kind": "disposed"}:
            agent.session.commit()   # being cancelled: no awaiting in here
        else:
            await commit(agent)


async def commit(agent) -> None:
    """One durable batch (write + fsync) before the turn goes on. While other agents' turns run it is
    written off the event loop, so they keep streaming during the fsync (safe: only this agent's driver
    appends to its log, and it waits here). A turn running alone writes it in place: it would wait for
    the fsync anyway, and the thread hop cost more CPU than the write (docs/performance.md). Nothing
    pending (half of a turn's checkpoints): nothing to write."""
    if not getattr(agent.session, "pending", 1):
        return
    if len(_RUNNING) <= 1:
        agent.session.commit()
    else:
        await asyncio.to_thread(agent.session.commit)


def _check(agent) -> None:
    if agent.abort_event.is_set():
        raise TurnAborted()


def failure_of(exc: BaseException) -> dict:
    failure = getattr(exc, "failure", None)
    if failure is not None and hasattr(failure, "to_json"):
        return failure.to_json()
    return {"message": f"{type(exc).__name__}: {exc}", "code": "UNKNOWN"}
