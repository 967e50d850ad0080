"""`dshctl session list|show|export|archive`: the session logs of a home (ours or a real dsh home's).

Reading never writes: a torn tail or a turn a crash left open is reported, not repaired (a resume
repairs). A session is named by its id or a unique prefix of it; for dsh's ``session-<uuid>`` ids the prefix
may leave out ``session-``.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, check_format, command_group, effective, print_json
from dshctl.cli.common import complete_sessions
from dshctl.errors import DshctlError

IdArg = Annotated[str, typer.Argument(metavar="ID", help="A session id, or a unique prefix of one.",
                                      autocompletion=complete_sessions)]
OutputOpt = Annotated[Optional[Path], typer.Option(
    "--output", "-o", help="Write to this file (atomically) instead of stdout.", show_default=False)]
LIST_HINT = "`dshctl session list` shows the sessions of this home"


def _store(ctx, home):
    from dshctl.agents.session.store import SessionStore

    return SessionStore(effective(ctx, home).home)


def _resolve_id(store, wanted: str) -> str:
    from dshctl.agents.session.reader import CorruptLog
    from dshctl.agents.session.store import AmbiguousSessionId, SessionNotFound

    try:
        return store.resolve(wanted)
    except AmbiguousSessionId as exc:
        raise DshctlError(str(exc), hint="give more characters of the id") from None
    except SessionNotFound:
        raise DshctlError(f"no session {wanted!r} under {store.root}", hint=LIST_HINT) from None
    except CorruptLog as exc:      # the id is in two project directories
        raise DshctlError(str(exc), hint="remove or move one of the copies") from None


def _read(store, wanted: str):
    """The session, read only; every way a log can be unreadable becomes one clear error."""
    from dshctl.agents.session.reader import CorruptLog

    session_id = _resolve_id(store, wanted)
    try:
        return store.read(session_id)
    except CorruptLog as exc:
        raise DshctlError(f"{_path_of(store, session_id)}: cannot read session log: {exc}",
                          hint="the file is damaged or was written by another harness version") from None
    except OSError as exc:
        raise DshctlError(f"cannot read session {session_id!r}: {exc.strerror or exc}") from None


def _path_of(store, session_id: str) -> str:
    try:
        return str(store.find(session_id))
    except Exception:  # noqa: BLE001 - only for the message
        return session_id


TreeOpt = Annotated[bool, typer.Option("--tree", help="Show sub-agents under their parents, with label, "
                                                   "model, state and stop reason (reads children's logs).")]


def cmd_list(ctx: typer.Context, home: HomeOpt = None, profile: ProfileOpt = None, fmt: FormatOpt = "text",
             tree: TreeOpt = False) -> None:
    """List the sessions of the home, newest first (reads each log's header only).

    Example: dshctl session list --format json
    """
    check_format(fmt)
    if tree:
        from dshctl.cli.session_view import print_family
        print_family(_store(ctx, home), fmt)
        return
    infos = _store(ctx, home).list()
    if fmt == "json":
        print_json([i.to_json() for i in infos])
        return
    from dshctl.cli.preset_view import print_table
    from dshctl.cli.session_view import when

    if not infos:
        sys.stderr.write("dshctl: note: no sessions under " + str(_store(ctx, home).root) + "\n")
        return
    rows = []
    for info in infos:
        if info.error:
            rows.append([info.path.parent.name, "-", "-", "-", str(info.size), f"broken: {info.error}"])
            continue
        rows.append([info.id, when(info.header.get("createdAt")), info.header.get("cwd", "-"),
                     info.header.get("agentPreset", "-"), str(info.size), ""])
    print_table(["ID", "CREATED", "CWD", "PRESET", "BYTES", ""], rows)


def cmd_show(ctx: typer.Context, session_id: IdArg, home: HomeOpt = None, profile: ProfileOpt = None,
             fmt: FormatOpt = "text") -> None:
    """Show one session: its header, its turns and what a resume would repair.

    Example: dshctl session show 3f2a
    """
    from dshctl.agents.session.history import derive_history, latest_agent_preset, latest_request_header
    from dshctl.agents.session.summary import turns

    check_format(fmt)
    seen = _read(_store(ctx, home), session_id)
    summary = turns(seen.events)
    state = _log_only_state(seen)
    if fmt == "json":
        print_json({"header": seen.header, "path": str(seen.path), "events": len(seen.events),
                    "tornBytes": seen.torn_bytes, "repair": [c["type"] for c in seen.closers],
                    "agentPreset": latest_agent_preset(seen.events),
                    "requestHeader": latest_request_header(seen.events), **state,
                    "turns": summary, "history": derive_history(seen.events)})
        return
    from dshctl.cli.session_prices import recorded_prices
    from dshctl.cli.session_view import print_session

    s = effective(ctx, home, profile)
    print_session(seen, summary, state, recorded_prices(s.home, s.profile))


def _log_only_state(seen) -> dict:
    """What the session is set to, from dsh's log-only events (title, permission knobs, route, inbox)."""
    from dshctl.agents.session import folds

    try:
        inbox = folds.pending_inbox(seen.events, seen.header.get("seedLength", 0))
    except folds.InboxFoldError as exc:
        raise DshctlError(f"{seen.path}: cannot read session log: {exc}",
                          hint="the file is damaged or was written by another harness version") from None
    return {"title": folds.title(seen.events), "knobs": folds.knobs(seen.events),
            "requestContext": folds.request_context(seen.events),
            "inbox": {"nextTurn": [m.get("id") for m in inbox["next-turn"]],
                      "nextStep": [m.get("id") for m in inbox["next-step"]]}}


def cmd_export(ctx: typer.Context, session_id: IdArg, home: HomeOpt = None, profile: ProfileOpt = None,
               fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl (the log as stored) or json.")]
               = "jsonl", output: OutputOpt = None) -> None:
    """Export one session: the logical session.jsonl text (decompressed), or one JSON document.

    Example: dshctl session export 3f2a --format json -o session.json
    """
    from dshctl.agents.session.reader import CorruptLog
    from dshctl.core.yaml.jsvalue import json_dumps

    check_format(fmt, ("jsonl", "json"))
    store = _store(ctx, home)
    seen = _read(store, session_id)                  # validates before anything is written
    if fmt == "json":
        text = json_dumps({"header": seen.header, "events": seen.events}, indent=2) + "\n"
    else:
        try:
            text = store.raw_text(seen.header["id"])
        except (CorruptLog, UnicodeDecodeError) as exc:
            raise DshctlError(f"{seen.path}: cannot export session log: {exc}") from None
    if output is None:
        sys.stdout.write(text)
        return
    from dshctl.core.fsutil import atomic_write

    try:
        atomic_write(output, text)
    except OSError as exc:
        raise DshctlError(f"cannot write {output}: {exc.strerror or exc}") from None
    sys.stderr.write(f"dshctl: wrote {len(seen.events)} events to {output}\n")


def cmd_archive(ctx: typer.Context, session_id: IdArg,
                undo: Annotated[bool, typer.Option("--undo", help="Take it out of the archive again.")] = False,
                home: HomeOpt = None, profile: ProfileOpt = None, fmt: FormatOpt = "text") -> None:
    """Archive a session of the profile: hidden, and a plugin driving it (the loop-agent bundle) stops;
    --undo takes it out of the archive (a stopped loop stays stopped until /forever).

    Example: dshctl session archive 3f2a --profile web
    """
    from dshctl.agents.workspace import set_archived, workspace_file

    check_format(fmt)
    st = effective(ctx, home, profile)
    if not (st.home / "profiles" / st.profile).is_dir():
        raise DshctlError(f"no profile {st.profile!r} under {st.home / 'profiles'}",
                          hint="`dshctl profile list` shows the profiles of this home")
    found = _resolve_id(_store(ctx, home), session_id)
    path = workspace_file(st.home, st.profile)
    try:
        changed = set_archived(path, found, not undo)
    except OSError as exc:
        raise DshctlError(f"cannot write {path}: {exc.strerror or exc}") from None
    if fmt == "json":
        print_json({"session": found, "archived": not undo, "changed": changed, "path": str(path)})
        return
    state = "archived" if not undo else "restored from the archive"
    sys.stdout.write(f"session {found} {state}" + ("" if changed else " (it already was)") + "\n")


def register(app: typer.Typer) -> None:
    group = command_group("List, show, export and archive the session logs of a home.")
    group.command("list")(cmd_list)
    group.command("show")(cmd_show)
    group.command("export")(cmd_export)
    group.command("archive")(cmd_archive)
    app.add_typer(group, name="session")
