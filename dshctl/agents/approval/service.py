"""``ctx.approval``: one-shot approval questions, audited in the session log, decided by the session's
policy first and then by one answerer.

``request`` (inside an open turn) logs ``approval/asked``, decides, logs ``approval/decided`` with the
same id, and returns one of dsh's outcomes. Under ``never`` it is ``rejected`` without asking anyone.
Under ``ask`` the ``approval/request`` waterfall runs first (a plugin answers for agents it owns, or
calls ``next()``); at its end the front end attached to the agent's turn answers — ``agent chat`` on
the terminal, ``agent run`` through its stream, the control socket's client — through the same
``agent.ask_user`` channel ``ask_user_question`` uses. With nobody attached the outcome is
``unavailable``: fail closed. An answerer that raises or returns something else is ``unavailable``
too; an abort of the turn is ``cancelled``.
"""
from __future__ import annotations

import asyncio
import json
import uuid

from .policy import (ALLOWED_ONCE, APPROVAL_POLICIES, ASK, CANCELLED, NEVER, OUTCOMES, REJECTED, UNAVAILABLE,
                     fold_approval_policy, has_open_turn)

ALLOW_LABEL, DENY_LABEL = "allow once", "deny"


class ApprovalService:
    def __init__(self, ctx, default_policy: str = ASK):
        if default_policy not in APPROVAL_POLICIES:
            raise ValueError(f'approval policy must be one of "ask" or "never", not {default_policy!r}')
        self.ctx, self.default_policy = ctx, default_policy

    def policy_of(self, session) -> str:
        return fold_approval_policy(session.events) or self.default_policy

    def set_policy(self, agent, policy: str, *, tell_model: bool = True) -> None:
        """Switch one agent's policy: one ``approval/policy`` event; the model is told on its next step
        (dsh's notice) unless the session is being created (nothing was visible before)."""
        if policy not in APPROVAL_POLICIES:
            raise ValueError('approval policy must be one of "ask" or "never"')
        pinned = fold_approval_policy(agent.session.events)
        previous = pinned or self.default_policy
        if pinned == policy:
            return
        agent.append("approval/policy", {"policy": policy})
        if tell_model and pinned is not None:      # a new session's first pin changes nothing visible
            agent.inject(f'The approval policy changed from "{previous}" to "{policy}" (changed by the user).',
                         {"kind": "plugin", "plugin": "user-approval"})

    async def request(self, agent, tool_name: str, *, call_id=None, reason: str | None = None,
                      arguments=None, signal: asyncio.Event | None = None) -> str:
        session = agent.session
        if not has_open_turn(session.events):
            raise RuntimeError("approval.request() outside an open turn: the approval/asked + approval/decided "
                               "audit pair must be turn-enclosed; ask from inside the turn that needs it")
        ask_id = str(uuid.uuid4())
        asked = {"id": ask_id, "toolName": tool_name}
        if call_id is not None:
            asked["callId"] = call_id
        if reason is not None:
            asked["reason"] = reason
        agent.append("approval/asked", asked)
        outcome = await self._decide(agent, {**asked, "arguments": arguments}, signal)
        agent.append("approval/decided", {"id": ask_id, "outcome": outcome})
        return outcome

    async def _decide(self, agent, req: dict, signal) -> str:
        if signal is not None and signal.is_set():
            return CANCELLED
        if self.policy_of(agent.session) == NEVER:
            return REJECTED
        answer = asyncio.ensure_future(self._answer(agent, req))
        waits = {answer}
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        if aborted is not None:
            waits.add(aborted)
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if aborted is not None:
                aborted.cancel()
        if answer not in done:
            answer.cancel()              # a late answer is discarded
            return CANCELLED
        try:
            outcome = answer.result()
        except Exception:  # noqa: BLE001 - a failing answerer fails the question closed
            return UNAVAILABLE
        return outcome if outcome in OUTCOMES else UNAVAILABLE

    async def _answer(self, agent, req: dict) -> str:
        registry = getattr(self.ctx, "registry", None)
        if registry is not None and registry.events.has_listeners("approval/request"):
            return await self.ctx.waterfall("approval/request", {**req, "agent": agent},
                                            default=lambda: attached_front_end(agent, req))
        return await attached_front_end(agent, req)


async def attached_front_end(agent, req: dict) -> str:
    """The terminal answerer: the front end watching this agent's turn, asked as an
    ``ask_user_question`` with two options; no front end (or no answer) is ``unavailable``."""
    asker = getattr(agent, "ask_user", None)
    if asker is None:
        return UNAVAILABLE
    answer = await asker(approval_question(req))
    option = answer.get("option") if isinstance(answer, dict) else None
    return {ALLOW_LABEL: ALLOWED_ONCE, DENY_LABEL: REJECTED}.get(option, UNAVAILABLE)


def approval_question(req: dict) -> dict:
    """The question a front end shows: the tool call itself (name and arguments) and why it asks."""
    shown = json.dumps(req.get("arguments"), ensure_ascii=False, sort_keys=True)
    if len(shown) > 2000:
        shown = shown[:2000] + "…"
    text = f'Allow the call {req["toolName"]}({shown})?'
    if req.get("reason"):
        text += f" Reason: {req['reason']}"
    return {"question": text, "allowFreeText": False,
            "options": [{"label": ALLOW_LABEL}, {"label": DENY_LABEL}],
            "approval": {k: req[k] for k in ("id", "toolName", "callId", "reason", "arguments") if k in req}}
