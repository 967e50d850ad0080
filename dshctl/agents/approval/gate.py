"""The ``ask`` decision of ``tools/pre-execute`` resolved through ``ctx.approval`` (dsh's
``serviceAsk``), and an escalated retry (``sandbox_permissions`` + ``justification``) judged before
anything runs (dsh's ``approveEscalation``). Each returns a pre-execute decision or the granted mode,
with dsh's texts for every way it does not end in a grant."""
from __future__ import annotations

from dshctl.agents.sandbox.policy import check_widening, validate_escalation_args

from .policy import ALLOWED_ONCE, CANCELLED, REJECTED, UNAVAILABLE, rejection_reason


async def resolve_ask(ctx, exec_: dict, decision: dict) -> dict:
    """``{"kind": "allow"}`` or ``{"kind": "deny", "reason", "cancelled"?}`` for an ``ask`` decision."""
    name = exec_.get("name")
    approval = ctx.get("approval")
    if approval is None:
        return {"kind": "deny", "reason": decision.get("reason") or f'tool "{name}" requires approval (not yet supported)'}
    agent = exec_.get("agent")
    if agent is None or getattr(agent, "session", None) is None:
        return {"kind": "deny", "reason": f'tool "{name}" requires approval, but the call has no agent to route it through'}
    outcome = await approval.request(agent, name, call_id=exec_.get("callId"), reason=decision.get("reason"),
                                     arguments=exec_.get("arguments"), signal=exec_.get("signal"))
    if outcome == ALLOWED_ONCE:
        return {"kind": "allow"}
    return {"kind": "deny", "reason": rejection_reason(outcome, name), "cancelled": outcome == CANCELLED}


async def approve_escalation(ctx, run, *, requested_mode: str, justification: str, effective_mode: str,
                             subject: str) -> str:
    """The mode granted to exactly this call, or ValueError with dsh's text (nothing has run then).
    ``run`` is the tool's :class:`~dshctl.agents.tools.definition.ToolRun` (agent, call id, tool name)."""
    validate_escalation_args(requested_mode, justification)
    check_widening(requested_mode, effective_mode)
    approval = ctx.get("approval")
    if approval is None:
        raise ValueError(f'sandbox escalation to "{requested_mode}" requires approval, but no approval service '
                         "is composed")
    agent = getattr(run, "agent", None)
    if agent is None:
        raise ValueError(f'sandbox escalation to "{requested_mode}" requires approval, but the call has no agent '
                         "to route it through")
    outcome = await approval.request(agent, run.name, call_id=run.call_id,
                                     reason=f"escalate sandbox to {requested_mode}: {justification}",
                                     signal=getattr(run, "abort", None))
    if outcome == ALLOWED_ONCE:
        return requested_mode
    raise ValueError({
        REJECTED: f'the user rejected escalating this {subject} to "{requested_mode}"',
        CANCELLED: f'approval for escalating to "{requested_mode}" was cancelled',
        UNAVAILABLE: f'sandbox escalation to "{requested_mode}" requires approval, but no approval channel is '
                     "available",
    }[outcome])
