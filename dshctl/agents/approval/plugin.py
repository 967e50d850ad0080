"""``@dshctl/approval``: ``ctx.approval`` (dsh's ``dsh-user-approval``), the permission presets over it
and ``ctx.sandboxPolicy`` (dsh's ``dsh-permission-presets``), and the runtime-context snapshot that
tells the model both policies.

- ``policy``: the default for sessions without an ``approval/policy`` event (``ask``).
- ``ask``: tool-name patterns (fnmatch) whose every call asks first — a ``tools/pre-execute`` gate
  returning dsh's ``ask`` decision; other plugins' gates may return ``ask`` too.
- ``defaultPreset``: pinned into a new session before its first request (``permission/preset``,
  ``sandbox/mode``, ``approval/policy``, as dsh pins them), unless the session already has them.

A user message ``/permission NAME`` (or ``/permissions NAME``) switches the preset from any front end;
the command never reaches the model.

Before every request the current policies are rendered as dsh's runtime-context snapshot and logged as
a ``user/message`` from ``@deepseek-ai/dsh-system-prompt`` when they differ from the last one logged,
so the model sees a change on its next request and replay rebuilds what it saw.
"""
from __future__ import annotations

from fnmatch import fnmatchcase

from dshctl.agents.loop.inbox import user_message

from .policy import APPROVAL_POLICIES, ASK_SENTENCE, NEVER, NEVER_SENTENCE, PRESETS, fold_approval_policy
from .service import ApprovalService

name = "@dshctl/approval"
schema = {"type": "object", "default": {}, "additionalProperties": False, "properties": {
    "policy": {"enum": list(APPROVAL_POLICIES), "default": "ask"},
    "ask": {"type": "array", "items": {"type": "string"}, "default": []},
    "defaultPreset": {"enum": list(PRESETS)},
}}

CONTEXT_SOURCE = "@deepseek-ai/dsh-system-prompt"
CONTEXT_HEAD = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."


def apply(ctx, config):
    service = ApprovalService(ctx, config["policy"])
    ctx.provide("approval", service)
    patterns = list(config["ask"])

    if patterns:
        async def gate(exec_, next_):
            if any(fnmatchcase(str(exec_.get("name")), p) for p in patterns):
                return {"kind": "ask", "reason": f'the profile asks before every "{exec_.get("name")}" call'}
            return await next_()
        ctx.on("tools/pre-execute", gate)

    async def pre_step(payload, next_):
        decision = await next_()
        messages = decision.get("messages") if isinstance(decision, dict) else None
        keep = []
        for message in messages or []:
            name = permission_command(message)
            if name is None:
                keep.append(message)
            elif name in PRESETS:
                apply_preset(ctx, service, payload["agent"], name)
            else:
                logger = ctx.get("logger")
                if logger is not None:
                    logger.warn(f'unknown preset "{name}" (available: {", ".join(PRESETS)})')
        if messages is None or len(keep) == len(messages):
            return decision
        return {**decision, "messages": keep}
    ctx.on("agent/pre-step", pre_step)

    async def on_request(payload, next_):
        agent = payload.get("agent") if isinstance(payload, dict) else None
        if agent is not None and getattr(agent, "session", None) is not None:
            pin_initial_permission(ctx, service, agent, config.get("defaultPreset"))
            log_runtime_context(ctx, service, agent)
        return await next_()
    ctx.on("agent/request", on_request)


def permission_command(message: dict) -> str | None:
    """The preset a ``/permission NAME`` (or ``/permissions NAME``) user message selects, else None;
    the command itself never reaches the model (dsh's ``/permission``)."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    text = "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text").strip()
    head, _, arg = text.partition(" ")
    return arg.strip() if head in ("/permission", "/permissions") and arg.strip() else None


def pin_initial_permission(ctx, service: ApprovalService, agent, preset: str | None) -> None:
    events = agent.session.events
    if any(e.get("type") in ("approval/policy", "permission/preset") for e in events):
        return
    sandbox_policy = ctx.get("sandboxPolicy")
    if preset is not None:
        apply_preset(ctx, service, agent, preset, tell_model=False)
        return
    if sandbox_policy is not None and not any(e.get("type") == "sandbox/mode" for e in events):
        sandbox_policy.set_mode(agent, sandbox_policy.default_mode)
    service.set_policy(agent, service.default_policy, tell_model=False)


def apply_preset(ctx, service: ApprovalService, agent, preset: str, *, tell_model: bool = True) -> None:
    """Record the choice (``permission/preset``), then write each knob that changes (dsh's order)."""
    if preset not in PRESETS:
        raise ValueError(f'unknown preset "{preset}" (available: {", ".join(PRESETS)})')
    mode, policy, _ = PRESETS[preset]
    agent.append("permission/preset", {"preset": preset})
    sandbox_policy = ctx.get("sandboxPolicy")
    if sandbox_policy is not None and sandbox_policy.mode_of(agent.session) != mode:
        sandbox_policy.set_mode(agent, mode)
    elif sandbox_policy is None:
        agent.append("sandbox/mode", {"mode": mode})
    if fold_approval_policy(agent.session.events) != policy:
        service.set_policy(agent, policy, tell_model=tell_model)


def runtime_context(ctx, service: ApprovalService, session) -> tuple[str, list[dict]]:
    sections = []
    plan_mode = ctx.get("planMode")     # @dshctl/plan-mode's rules while the session plans (dsh's order 50)
    plan_text = plan_mode.context_text(session) if plan_mode is not None else None
    if plan_text:
        sections.append({"name": "plan:policy", "text": plan_text})
    sandbox_policy = ctx.get("sandboxPolicy")
    if sandbox_policy is not None:
        sections.append({"name": "sandbox:policy", "text": sandbox_policy.context_text(session)})
    sections.append({"name": "approval:policy",
                     "text": NEVER_SENTENCE if service.policy_of(session) == NEVER else ASK_SENTENCE})
    return CONTEXT_HEAD + "\n\n" + "\n\n".join(s["text"] for s in sections), sections


def log_runtime_context(ctx, service: ApprovalService, agent) -> None:
    text, sections = runtime_context(ctx, service, agent.session)
    # Compared with the snapshot the model still has (its history, compaction applied), not the raw log:
    # a snapshot compacted away is told again.
    history = agent.history.messages(agent.session.events) if hasattr(agent, "history") else []
    for message in reversed(history):
        if (message.get("source") or {}).get("plugin") == CONTEXT_SOURCE:
            blocks = message.get("content") or []
            if len(blocks) == 1 and blocks[0].get("text") == text:
                return
            break
    message = user_message(text, {"kind": "plugin", "plugin": CONTEXT_SOURCE, "form": "snapshot",
                                  "sections": sections})
    agent.append("user/message", message, surfaceOp="append")
