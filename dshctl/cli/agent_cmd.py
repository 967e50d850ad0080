"""``dshctl agent run`` (one turn) and ``dshctl agent chat`` (interactive), on the running host through
its control socket, or on an embedded host when none runs (docs/agents.md, "CLI")."""
from __future__ import annotations

from typing import Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, command_group, effective
from dshctl.cli.common import complete_presets

PresetOpt = Annotated[Optional[str], typer.Option("--preset", help="Agent preset for the session.", autocompletion=complete_presets,
                                                  show_default=False)]
SessionOpt = Annotated[Optional[str], typer.Option("--session", "-s", help="Continue this session (an id or "
                                                   "a unique prefix of one).", show_default=False)]
ContinueOpt = Annotated[bool, typer.Option("--continue", "-c", help="Continue the newest session started in "
                                           "this directory.")]
ModelOpt = Annotated[Optional[str], typer.Option("--model", "-m", help="Use this model (of the llm row's API) "
                                                 "for the session's turns.", show_default=False)]
ReasoningOpt = Annotated[bool, typer.Option("--show-reasoning", help="Show the model's reasoning (on stderr).")]

PermissionsOpt = Annotated[Optional[str], typer.Option(
    "--permissions", help="Permission preset for the session: workspace-write (ask before wider access) or "
                          "danger-full-access (no confinement, no prompts).", show_default=False)]
ApprovalOpt = Annotated[Optional[str], typer.Option(
    "--approval", help="Approval policy for the session: ask (a prompt; nobody to answer = refused) or "
                       "never (refuse every call that needs approval).", show_default=False)]

def register(app: typer.Typer) -> None:
    group = command_group("Run the profile's agent: one turn, or an interactive chat.")
    group.command("run")(run)
    group.command("chat")(chat)
    app.add_typer(group, name="agent")


def run(ctx: typer.Context, prompt: Annotated[str, typer.Argument(help="What to ask the agent.")],
        preset: PresetOpt = None, session: SessionOpt = None, continue_last: ContinueOpt = False,
        model: ModelOpt = None, show_reasoning: ReasoningOpt = False, home: HomeOpt = None,
        profile: ProfileOpt = None, fmt: FormatOpt = "text", permissions: PermissionsOpt = None,
        approval: ApprovalOpt = None) -> None:
    """One turn: streams the answer (tool calls on stderr); --format json prints the turn's events as
    JSON lines. Exit 0 completed (or max-tokens), 1 error, 4 rejected or stopped by a plugin, 130 aborted.
    A new session records the current directory as its cwd (dsh groups sessions by it).

    Example: dshctl agent run --profile web 'What do the workspace notes say?'
    """
    from dshctl.cli import agent_run

    raise typer.Exit(agent_run.run(effective(ctx, home, profile), prompt=prompt, preset=preset, session=session,
                                   continue_last=continue_last, model=model, show_reasoning=show_reasoning,
                                   fmt=fmt, permissions=permissions, approval=approval))


def chat(ctx: typer.Context, preset: PresetOpt = None, session: SessionOpt = None,
         continue_last: ContinueOpt = False, model: ModelOpt = None, show_reasoning: ReasoningOpt = False,
         home: HomeOpt = None, profile: ProfileOpt = None, permissions: PermissionsOpt = None,
         approval: ApprovalOpt = None) -> None:
    """Talk to the agent: each line is a turn, streamed as it comes; Ctrl-C aborts a running turn,
    Ctrl-D (or /quit) leaves. /help lists the commands.

    Example: dshctl agent chat --profile web --session 3f2a
    """
    import asyncio

    from dshctl.cli.agent_options import check_preset, pick_session
    from dshctl.cli.agent_view import ChatSession
    s = effective(ctx, home, profile)
    session = pick_session(s, session, continue_last)
    check_preset(s, preset)
    chosen = {k: v for k, v in (("permissions", permissions), ("approval", approval)) if v is not None}
    code = asyncio.run(ChatSession(s, session=session, preset=preset, model=model,
                                   show_reasoning=show_reasoning, permissions=chosen).run())
    raise typer.Exit(code)

