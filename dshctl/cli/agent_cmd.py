"""``dshctl agent run`` (one turn) and ``dshctl agent chat`` (interactive), on the running host through
its control socket, or on an embedded host when none runs (docs/agents.md, "CLI")."""
from __future__ import annotations

from typing import Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, check_format, command_group, effective

PresetOpt = Annotated[Optional[str], typer.Option("--preset", help="Agent preset for the session.",
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
    JSON lines. Exit 0 completed (or max-tokens), 1 error, 4 rejected or stopped by a plugin, 130 aborted."""
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
    from dshctl.cli.agent_link import connect
    link = await connect(s.home, s.profile)
    try:
        return await drive_turn(link, request, printer)
    finally:
        await link.close()


async def drive_turn(link, request: dict, printer) -> dict | None:
    """One turn through ``link``; Ctrl-C asks the host to abort it (a second Ctrl-C drops the link)."""
    import asyncio
    import signal
    loop = asyncio.get_running_loop()
    presses = []

    def on_interrupt():
        presses.append(1)
        if len(presses) == 1:
            loop.create_task(link.send({"abort": True}))
            printer.note("aborting the turn (Ctrl-C again to leave at once)")
        else:
            raise KeyboardInterrupt
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        done = None
        async for line in link.turn({k: v for k, v in request.items() if v is not None}):
            if not line.get("ok", False):
                from dshctl.errors import DshctlError
                raise DshctlError(f"agent run on {link.where}: {line.get('error')}", hint=line.get("hint"))
            if "ask" in line:
                await link.send({"answer": await printer.ask(line["ask"])})
            elif "event" in line:
                printer.event(line["event"])
            elif line.get("done"):
                done = line
        if done is None:
            from dshctl.errors import DshctlError
            raise DshctlError("the host closed the turn's stream early", hint="see the host's log")
        printer.done(done)
        return done.get("reason")
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def chat(ctx: typer.Context, preset: PresetOpt = None, session: SessionOpt = None, home: HomeOpt = None,
         profile: ProfileOpt = None) -> None:
    """Talk to the agent: each line is a turn, streamed as it comes; Ctrl-C aborts a running turn,
    Ctrl-D (or /quit) leaves. /help lists the commands."""
    import asyncio

    from dshctl.cli.agent_view import ChatSession
    s = effective(ctx, home, profile)
    code = asyncio.run(ChatSession(s, session=session, preset=preset).run())
    raise typer.Exit(code)

