"""dsh's approval vocabulary (``packages/interaction/user-approval``) and permission presets
(``packages/interaction/permission-presets``): policies, outcomes, the session-log events and their
folds, the sentences the model reads. Pure."""
from __future__ import annotations

ASK, NEVER = "ask", "never"
APPROVAL_POLICIES = (ASK, NEVER)
ALLOWED_ONCE, REJECTED, CANCELLED, UNAVAILABLE = "allowed-once", "rejected", "cancelled", "unavailable"
OUTCOMES = (ALLOWED_ONCE, REJECTED, CANCELLED, UNAVAILABLE)

# dsh's default preset table: name -> (sandbox mode, approval policy, description)
PRESETS = {
    "workspace-write": ("workspace-write", ASK,
                        "Write inside the workspace and permitted temporary directories; wider retries "
                        "require approval."),
    "danger-full-access": ("danger-full-access", NEVER, "Full file access without approval prompts."),
}
CUSTOM_PRESET = "custom"

NEVER_SENTENCE = ("Approval prompts are disabled in this session: actions that require approval are rejected "
                  "automatically — do not request sandbox escalation (do not set `sandbox_permissions`).")
ASK_SENTENCE = ("Approval policy: ask. Operations that require approval may ask through the configured "
                "answerers; without an available answerer, the request fails closed.")


def _last(events, kind: str, key: str, allowed) -> str | None:
    for event in reversed(events if isinstance(events, list) else list(events)):
        if isinstance(event, dict) and event.get("type") == kind:
            value = (event.get("data") or {}).get(key)
            return value if value in allowed else None
    return None


def fold_approval_policy(events) -> str | None:
    """The last ``approval/policy`` event's policy, or None (the configured default applies)."""
    return _last(events, "approval/policy", "policy", APPROVAL_POLICIES)


def fold_permission_preset(events) -> str | None:
    return _last(events, "permission/preset", "preset", PRESETS)


def has_open_turn(events) -> bool:
    """Inside a ``turn/start`` not yet closed by ``turn/end`` (the audit pair must be turn-enclosed)."""
    for event in reversed(events if isinstance(events, list) else list(events)):
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "turn/start":
            return True
        if kind == "turn/end":
            return False
    return False


def current_preset(sandbox_mode: str, policy: str, selected: str | None) -> str:
    """The preset the knobs match: a still-matching last selection wins a tie, else the first match in
    table order, else ``custom`` (dsh's derivation)."""
    if selected in PRESETS and PRESETS[selected][:2] == (sandbox_mode, policy):
        return selected
    for name, (mode, approval, _) in PRESETS.items():
        if (mode, approval) == (sandbox_mode, policy):
            return name
    return CUSTOM_PRESET


def rejection_reason(outcome: str, tool: str) -> str | None:
    """What the model reads when an ``ask`` decision does not end in a grant (dsh's texts)."""
    return {
        REJECTED: f'the user rejected tool "{tool}"',
        CANCELLED: f'approval for tool "{tool}" was cancelled',
        UNAVAILABLE: f'tool "{tool}" requires approval, but no approval channel is available',
    }.get(outcome)
