"""What ``agent run`` / ``agent chat`` work out before a turn: which session (an id, a unique prefix of one,
or ``--continue``: the newest session started in this directory) and whether a preset exists."""
from __future__ import annotations

import os

from dshctl.errors import DshctlError


def _store(state):
    from dshctl.agents.session.store import SessionStore
    return SessionStore(state.home)


def pick_session(state, session: str | None, continue_last: bool) -> str | None:
    """The session id to continue, or None for a new session."""
    if session and continue_last:
        raise DshctlError("--session and --continue name the session twice", hint="give one of them")
    if session:
        from dshctl.cli.session_cmd import _resolve_id
        return _resolve_id(_store(state), session)
    if not continue_last:
        return None
    here = os.getcwd()
    for info in _store(state).list():            # newest first
        if info.id and info.header.get("cwd") == here:
            return info.id
    raise DshctlError(f"no session was started in {here}", hint="run without --continue to start one, or "
                      "pick one from `dshctl session list`")


def check_preset(state, preset: str | None) -> None:
    """A preset that does not exist is refused before any turn (available ones named)."""
    if not preset:
        return
    from dshctl.cli.preset_list_run import roster_of
    roster_of(state, None, False, strict=False).require(preset)


def usage_line(usage: dict | None, prices: dict | None = None) -> str | None:
    """One turn's tokens, as ``tokens in N, out M`` (+ cache hits, reasoning, and the cost when the llm
    row sets prices) — None without usage."""
    if not usage:
        return None
    parts = [f"tokens in {usage.get('inputTokens', 0)}", f"out {usage.get('outputTokens', 0)}"]
    if usage.get("cacheReadTokens"):
        parts.append(f"cache hits {usage['cacheReadTokens']}")
    if usage.get("reasoningTokens"):
        parts.append(f"reasoning {usage['reasoningTokens']}")
    if prices:
        from dshctl.cli.session_prices import cost_of
        parts.append(f"cost {cost_of(usage, prices):.6f} {prices.get('currency', 'USD')}")
    return ", ".join(parts)


def add_usage(total: dict, usage: dict | None) -> None:
    for key, value in (usage or {}).items():
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value
