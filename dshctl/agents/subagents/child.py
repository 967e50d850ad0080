"""Composing a child from its parent, as dsh's ``child-agent.ts`` does.

Depth: the parent's delegation depth is the larger of its header's ``delegationDepth`` (durable, so a
resumed child cannot count itself top-level) and its options' ``subagentDepth``; the child is one deeper
and refused past ``maxDepth``. The child's header records ``parentSession``, ``origin: subagent``,
``delegationDepth``, the parent's ``cwd`` and, for a fork, ``seedLength``. Policies: when an approval
service runs the child's log pins ``approval/policy`` to ``never`` (source ``delegation``) — nobody
answers a child's questions — and a parent's own ``sandbox/mode`` override is copied the same way, so
``ctx.sandboxPolicy`` resolves the child to the parent's mode. Composition: model / provider / maxTokens
from the parent unless the request overrides them, a persona replacing the deployment's system text,
dsh's delegation sentence appended, and a tool filter (``allow`` / ``deny``) on the child's tool scope.
"""
from __future__ import annotations

import uuid

from dshctl.agents.sandbox.policy import fold_sandbox_mode

from . import descriptor as descriptors

DELEGATION_CONTEXT = (
    "You are a delegated subagent: your permission scope was fixed when you were started and cannot be "
    "widened from inside this session — operations that require approval are rejected automatically. "
    "When the task needs access beyond that scope, do not retry the denied operation; state the "
    "limitation in your reply so the delegating agent can handle it.")


class SubagentDepthError(RuntimeError):
    def __init__(self, attempted: int, max_depth: int):
        super().__init__(f"subagent depth {attempted} exceeds maxDepth {max_depth}")
        self.attempted, self.max_depth = attempted, max_depth


def check_max_depth(max_depth) -> None:
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
        raise TypeError("subagent maxDepth must be a non-negative safe integer")


def delegation_depth_of(agent) -> int:
    runtime = (agent.options or {}).get("subagentDepth") or 0
    return max(int((agent.session.header or {}).get("delegationDepth") or 0), int(runtime))


def resolve_child_depth(parent, max_depth: int | None) -> int:
    depth = delegation_depth_of(parent) + 1
    if max_depth is not None and depth > max_depth:
        raise SubagentDepthError(depth, max_depth)
    return depth


def completed_turn_prefix(parent) -> list[dict]:
    """The fork seed: the parent's events through its last ``turn/end`` (never the turn in flight)."""
    events = parent.session.events
    last = max((i for i, e in enumerate(events) if e["type"] == "turn/end"), default=-1)
    return events[:last + 1]


def child_options(parent, request: dict, depth: int) -> dict:
    inherited = {k: parent.options[k] for k in ("provider", "model", "maxTokens", "repeatLimit")
                 if parent.options.get(k) is not None}
    inherited.update({k: v for k, v in (request.get("agentOptions") or {}).items() if v is not None})
    system = request.get("persona") or parent.options.get("system")
    inherited["system"] = f"{system}\n\n{DELEGATION_CONTEXT}" if system else DELEGATION_CONTEXT
    if request.get("toolFilter"):
        inherited["toolFilter"] = request["toolFilter"]
    inherited["subagentDepth"] = depth
    inherited["parent"] = parent.id
    return inherited


def _copy_seed(log, seed: list[dict]) -> None:
    for event in seed:
        extras = {k: v for k, v in event.items() if k not in ("type", "seq", "time", "data")}
        log.append(event["type"], event["data"], **extras)
    log.append("session/end-seed", {})


def _pin_policies(parent, log) -> None:
    mode = fold_sandbox_mode(parent.session.events)
    if mode is not None:
        log.append("sandbox/mode", {"mode": mode, "source": "delegation"})
    if parent.ctx.get("approval") is not None:
        log.append("approval/policy", {"policy": "never", "source": "delegation"})


async def create_child(parent, request: dict, descriptor: dict, *, seed: list[dict] | None = None,
                       max_depth: int | None = None, child_id: str | None = None):
    """A new child agent, live in the parent's ``agents`` registry, its log durable before it runs."""
    depth = resolve_child_depth(parent, max_depth)
    registry = parent.ctx.agents
    if registry.factory is None:
        raise RuntimeError("no agent loop is running to host the subagent")
    header = parent.session.header or {}
    log = registry.store.create(cwd=header.get("cwd"), session_id=child_id or str(uuid.uuid4()),
                                parent_session=parent.id, origin="subagent", delegation_depth=depth,
                                seed_length=len(seed) if seed else None)
    try:
        if seed:
            _copy_seed(log, seed)
        _pin_policies(parent, log)
        log.append(descriptors.EVENT, descriptor)
        log.commit()
        agent = await registry.factory.create(log, preset=None, options=child_options(parent, request, depth))
    except BaseException:
        log.close()
        raise
    registry.live[agent.id] = agent
    return agent
