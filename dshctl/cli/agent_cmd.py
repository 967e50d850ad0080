"""``dshctl agent run`` (one turn) and ``dshctl agent chat`` (interactive), on the running host through
its control socket, or on an embedded host when none runs (docs/agents.md, "CLI")."""
from __future__ import annotations

from typing import Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, check_format, command_group, effective
from dshctl.cli.common import complete_presets

PresetOpt = Annotated[Optional[str], typer.Option("--preset", help="Agent preset for the session.", autocompletion=complete_presets,
                                                  show_default=False)]
SessionOpt = Annotated[Optional[str], typer.Option("--session", "-s", help="Continue this session.",
                                                   show_default=False)]

# turn/end reason -> exit code of `agent run`
EXIT_BY_REASON = {"completed": 0, "max-tokens": 0, "blocked": 4, "aborted": 130, "error": 1}


def register(app: typer.Typer) -> None:
    group = command_group("Run the profile's agent: one turn, or an interactive chat.")
    group.command("run")(run)
    group.command("chat")(chat)
    app.add_typer(group, name="agent")


def run(ctx: typer.Context, prompt: Annotated[str, typer.Argument(help="What to ask the agent.")],
        preset: PresetOpt = None, session: SessionOpt = None, home: HomeOpt = None,
        profile: ProfileOpt = None, fmt: FormatOpt = "text") -> None:
    """One turn: streams the answer (tool calls on stderr); --format json prints the turn's events as
    JSON lines. Exit 0 completed (or max-tokens), 1 error, 4 rejected or stopped by a plugin, 130 aborted.

    Example: dshctl agent run --profile web 'What do the workspace notes say?'
    """
    import asyncio

    from dshctl.cli.agent_view import TurnPrinter
    check_format(fmt)
    s = effective(ctx, home, profile)
    printer = TurnPrinter(json_lines=fmt == "json")
    reason = asyncio.run(_run_once(s, {"prompt": prompt, "session": session, "preset": preset}, printer))
    raise typer.Exit(exit_code(reason))


def exit_code(reason: dict | None) -> int:
    kind = (reason or {}).get("kind")
    if kind == "aborted" and (reason.get("reason") or {}).get("kind") == "hook":
        return 4   # a plugin stopped it (loop-guard, a turn-stopping listener): like a rejection
    return EXIT_BY_REASON.get(kind, 1)


async def _run_once(s, request: dict, printer) -> dict | None:
    from dshctl.cli.agent_link import connect, drive_turn
    link = await connect(s.home, s.profile)
    try:
        return await drive_turn(link, request, printer)
    finally:
        await link.close()


def chat(ctx: typer.Context, preset: PresetOpt = None, session: SessionOpt = None, home: HomeOpt = None,
         profile: ProfileOpt = None) -> None:
    """Talk to the agent: each line is a turn, streamed as it comes; Ctrl-C aborts a running turn,
    Ctrl-D (or /quit) leaves. /help lists the commands.

    Example: dshctl agent chat --profile web --session 3f2a
    """
    import asyncio

    from dshctl.cli.agent_view import ChatSession
    s = effective(ctx, home, profile)
    code = asyncio.run(ChatSession(s, session=session, preset=preset).run())
    raise typer.Exit(code)

