"""The body of ``dshctl agent run`` without typer: the typer command (cli/agent_cmd.py) and the fast path
(cli/fastpath.py) both call ``run``. It imports only what a turn on a running host needs (the socket
link, the printer); the embedded host, the session store and the preset roster load when used."""
from __future__ import annotations

from typing import Optional

# turn/end reason -> exit code of `agent run`
EXIT_BY_REASON = {"completed": 0, "max-tokens": 0, "blocked": 4, "aborted": 130, "error": 1}


def run(state, *, prompt: str, preset: Optional[str], session: Optional[str], continue_last: bool,
        model: Optional[str], show_reasoning: bool, fmt: str, permissions: Optional[str],
        approval: Optional[str]) -> int:
    """One turn; the exit code from how it ended."""
    import asyncio

    from dshctl.cli.agent_options import check_preset, pick_session
    from dshctl.cli.agent_view import TurnPrinter, working_directory
    from dshctl.cli.shared import check_format
    check_format(fmt)
    session = pick_session(state, session, continue_last)
    check_preset(state, preset)
    printer = TurnPrinter(json_lines=fmt == "json")
    printer.show_reasoning = show_reasoning
    # cwd: a new session's workspace is where the agent was started (dsh's tools work there)
    request = {"prompt": prompt, "session": session, "preset": preset, "model": model,
               "cwd": working_directory(), "permissions": permissions, "approval": approval}
    return exit_code(asyncio.run(_run_once(state, request, printer)))


def exit_code(reason: dict | None) -> int:
    kind = (reason or {}).get("kind")
    if kind == "aborted" and (reason.get("reason") or {}).get("kind") == "hook":
        return 4   # a plugin stopped it (loop-guard, a turn-stopping listener): like a rejection
    return EXIT_BY_REASON.get(kind, 1)


async def _run_once(state, request: dict, printer) -> dict | None:
    from dshctl.cli.agent_link import connect, drive_turn
    link = await connect(state.home, state.profile)
    try:
        return await drive_turn(link, request, printer)
    finally:
        await link.close()
