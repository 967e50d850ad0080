"""One tool call through dsh's pipeline: look-up and argument checks, ``tools/pre-execute`` (waterfall: a
plugin may deny, or ask — then ``ctx.approval`` decides), the built-in repeat guard, ``tools/execute`` (waterfall around the body: timeouts,
metrics, retries), ``tools/post-execute`` (waterfall: accept, replace or block the result).

Nothing the model sends can make :func:`dispatch` raise: unknown or restricted names, arguments that are
not JSON or miss the input schema, a tool that raises or overruns its time limit, a listener that fails —
each becomes an error result the model and the log see, with the reason and a code.

The agent argument is duck-typed (the loop's :class:`~dshctl.agents.loop.agent.Agent`, or anything with
``ctx``, ``tool_view()``, ``restricted(name)``, ``abort_event`` and ``call_counts``).
"""
from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from . import bounds
from .definition import Tool, ToolRun, as_tool, error_result, normalize_result
from .hooks import waterfall
from .validation import argument_problem, dsh_violations

DEFAULT_REPEAT_LIMIT = 3     # the same call (name + arguments) more often than this in one turn is refused


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """(parsed, problem): empty text means ``{}``; text that is not JSON is a problem, not an exception."""
    if isinstance(raw, (dict, list)):
        problem = bounds.value_problem(raw)  # bounded before anything walks it recursively
        return ({}, problem) if problem else (raw, None)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    problem = bounds.text_problem(raw) if isinstance(raw, str) else None
    if problem:
        return bounds.kept(raw), problem
    try:
        return json.loads(raw), None
    except (TypeError, ValueError, RecursionError) as exc:
        return raw, f"the arguments are not valid JSON ({exc}); send one JSON object"


def lookup(agent, name: str) -> tuple[Tool | None, dict | None]:
    """The tool ``agent`` may call as ``name``, or the error result that explains why not."""
    view = agent.tool_view()
    definition = view.get(name)
    if definition is None:
        if agent.restricted(name):
            return None, error_result(f'tool "{name}" is not available in this session (restricted)',
                                      "TOOL_RESTRICTED")
        names = ", ".join(sorted(view)) or "none"
        return None, error_result(f'unknown tool "{name}" (available: {names})', "TOOL_UNKNOWN")
    try:
        return as_tool(name, definition), None
    except TypeError as exc:
        return None, error_result(str(exc), "TOOL_INVALID")


def plan(agent, call: dict) -> tuple[Tool | None, Any, dict | None]:
    """(tool, parsed arguments, early error result) for one call, before anything runs."""
    tool, problem = lookup(agent, str(call.get("name", "")))
    args, parse_problem = parse_arguments(call.get("arguments"))
    if problem is not None:
        return None, args, problem
    if parse_problem is not None:
        return tool, args, error_result(parse_problem, "TOOL_ARGUMENTS_JSON")
    schema_problem = argument_problem(tool.parameters, args)
    if schema_problem is not None and tool.dsh_arguments:
        violations = dsh_violations(tool.parameters, args) or [schema_problem]
        return tool, args, error_result(f"invalid arguments: {'; '.join(violations)}", "TOOL_ARGUMENTS_SCHEMA")
    if schema_problem is not None:
        return tool, args, error_result(f'arguments do not match the input schema of "{tool.name}": '
                                        f"{schema_problem}", "TOOL_ARGUMENTS_SCHEMA")
    return tool, args, None


async def dispatch(agent, call: dict, *, turn: int, step: int, origin: str = "model") -> dict:
    """Run ``call`` (``{"id", "name", "arguments": <JSON text>}``) and return its tool result."""
    tool, args, early = plan(agent, call)
    if early is not None:
        return early
    return await run_planned(agent, call, tool, args, turn=turn, step=step, origin=origin)


async def run_planned(agent, call: dict, tool: Tool, args: Any, *, turn: int, step: int,
                      origin: str) -> dict:
    exec_ = {"callId": call.get("id"), "name": tool.name, "arguments": args, "agent": agent,
             "turn": turn, "step": step, "origin": origin, "signal": agent.abort_event}
    ctx = agent.ctx
    try:
        decision = await waterfall(ctx, "tools/pre-execute", exec_, default=_ALLOW)
    except Exception as exc:  # noqa: BLE001 - a failing gate refuses the call, never the turn
        return error_result(f"tools/pre-execute failed: {type(exc).__name__}: {exc}", "TOOL_GATE_FAILED")
    if isinstance(decision, dict) and decision.get("kind") == "ask":     # through ctx.approval (dsh's serviceAsk)
        from dshctl.agents.approval.gate import resolve_ask
        decision = await resolve_ask(ctx, exec_, decision)
        if decision["kind"] != "allow":
            return error_result(decision["reason"], "TOOL_ABORTED" if decision.get("cancelled") else "TOOL_DENIED")
    if not isinstance(decision, dict) or decision.get("kind") != "allow":
        reason = decision.get("reason") if isinstance(decision, dict) else None
        return error_result(f'call to "{tool.name}" denied: {reason or "a tools/pre-execute listener refused it"}',
                            "TOOL_DENIED")
    refused = repeat_guard(agent, tool.name, args)
    if refused is not None:
        return refused
    run = ToolRun(str(call.get("id")), tool.name, agent, agent.abort_event, turn, step, origin)
    try:
        result = await waterfall(ctx, "tools/execute", exec_, default=lambda: run_body(tool, args, run))
        result = normalize_result(result)
    except Exception as exc:  # noqa: BLE001
        result = error_result(f"tools/execute failed: {type(exc).__name__}: {exc}", "TOOL_EXECUTE_FAILED")
    try:
        post = await waterfall(ctx, "tools/post-execute", exec_, result, default=_ACCEPT)
    except Exception as exc:  # noqa: BLE001
        return error_result(f"tools/post-execute failed: {type(exc).__name__}: {exc}", "TOOL_POST_FAILED")
    return apply_post_decision(result, post)


def _allow() -> dict:
    return {"kind": "allow"}


def _accept() -> dict:
    return {"kind": "accept"}


_ALLOW, _ACCEPT = _allow, _accept


def apply_post_decision(result: dict, post: Any) -> dict:
    if not isinstance(post, dict) or post.get("kind") not in ("accept", "block"):
        return result
    if post["kind"] == "block":
        return {"content": list(post.get("feedback") or []), "isError": True,
                "error": {"message": "blocked by tools/post-execute", "code": "TOOL_BLOCKED"}}
    if isinstance(post.get("content"), list):
        return {**result, "content": post["content"]}
    return result


def repeat_guard(agent, name: str, args: Any) -> dict | None:
    """The built-in guard: the same call, arguments and all, at most ``repeatLimit`` times a turn."""
    key = name + "\0" + json.dumps(args, sort_keys=True, default=str)
    counts = agent.call_counts
    counts[key] = counts.get(key, 0) + 1
    limit = getattr(agent, "repeat_limit", DEFAULT_REPEAT_LIMIT)
    if counts[key] > limit:
        return error_result(f'"{name}" was called with these same arguments {counts[key]} times this turn '
                            f"(limit {limit}); change the arguments or answer without it", "TOOL_REPEATED")
    return None


async def run_body(tool: Tool, args: Any, run: ToolRun) -> dict:
    """The tool body under its time limit and the caller's abort; raising becomes an error result."""
    if not tool.timeout_ms and not inspect.iscoroutinefunction(tool.execute):
        try:    # a plain function runs to its end anyway: no task, no wait
            value = tool.execute(args, run)
        except Exception as exc:  # noqa: BLE001
            return error_result(f'tool "{tool.name}" failed: {type(exc).__name__}: {exc}', "TOOL_FAILED")
        if not inspect.isawaitable(value):
            return normalize_result(value)
        return await _guarded(tool, value, run)
    return await _guarded(tool, _call(tool, args, run), run)


async def _guarded(tool: Tool, awaitable, run: ToolRun) -> dict:
    body = asyncio.ensure_future(awaitable)
    waits = {body}
    aborted = None
    if run.abort is not None:
        aborted = asyncio.ensure_future(run.abort.wait())
        waits.add(aborted)
    timeout = tool.timeout_ms / 1000 if tool.timeout_ms else None
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if aborted is not None:
            aborted.cancel()
    if body in done:
        exc = body.exception()
        if exc is not None:
            return error_result(f'tool "{tool.name}" failed: {type(exc).__name__}: {exc}', "TOOL_FAILED")
        return normalize_result(body.result())
    body.cancel()
    await asyncio.gather(body, return_exceptions=True)   # reach quiescence before reporting
    if aborted is not None and aborted in done:
        return error_result(f'tool "{tool.name}" aborted', "TOOL_ABORTED")
    return error_result(f'tool "{tool.name}" exceeded its time limit of {tool.timeout_ms:g} ms',
                        "TOOL_TIMEOUT")


async def _call(tool: Tool, args: Any, run: ToolRun) -> Any:
    value = tool.execute(args, run)
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        value = await value
    return value
