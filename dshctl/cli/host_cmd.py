"""``dshctl host run``, and the top-level ``dshctl reload`` and ``dshctl status`` that talk to it."""
from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, check_format, effective

PatchOpt = Annotated[Optional[List[Path]], typer.Option(
    "--patch", help="An extra patch file applied after the user layers (repeatable).", show_default=False)]


def _seconds(value: Optional[float]) -> Optional[float]:
    """``--for``: a time to run, so 0 or more and finite (a negative one used to be taken as "stop at
    once", nan and inf as "never")."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise typer.BadParameter(f"{value:g} is not a number of seconds (0 or more)")
    return value


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Run a profile on dshctl's Python host.", no_args_is_help=True)
    group.command("run")(run)
    app.add_typer(group, name="host")
    app.command("reload", help="Reload the running host's configuration and report per row.",
                epilog="Example: dshctl --home ~/.dsh reload --format json")(reload)
    app.command("status", help="Show the running host's tree and how it compares to disk and last-good.",
                epilog="Example: dshctl --profile web status")(status)


def run(
    ctx: typer.Context,
    home: HomeOpt = None,
    profile: ProfileOpt = None,
    patch: PatchOpt = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Boot the last-good tree when the current layers do not compose or fail to start.")] = False,
    log_format: Annotated[str, typer.Option("--log-format", help="rich or json (JSON lines).")] = "rich",
    run_for: Annotated[Optional[float], typer.Option(
        "--for", help="Run this many seconds, then shut down gracefully.", show_default=False,
        metavar="SECONDS", callback=_seconds)] = None,
    skip_unavailable: Annotated[bool, typer.Option(
        "--skip-unavailable", help="Run the other rows when a plugin has no Python implementation, and "
        "report the skipped ones (default: such rows fail the boot).")] = False,
    watch: Annotated[bool, typer.Option(
        "--watch/--no-watch", help="Hot-reload saved user layers and plugin modules (else only `dshctl reload`).")] = True,
    apply_timeout: Annotated[float, typer.Option(
        "--apply-timeout", help="Seconds a plugin may take to start or stop before it counts as failed.")] = 30.0,
    fleet: Annotated[Optional[str], typer.Option(
        "--fleet", help="Run the fleet's revisions from etcd at URL (docs/fleet.md); needs --host-id.",
        show_default=False)] = None,
    host_id: Annotated[Optional[str], typer.Option(
        "--host-id", help="This host's name in the fleet (its report key).", show_default=False)] = None,
    prefix: Annotated[str, typer.Option("--prefix", help="The fleet's key prefix in etcd.")] = "/dshctl",
    lease_ttl: Annotated[int, typer.Option(
        "--lease-ttl", help="Seconds a dead host's report stays in etcd (its lease).")] = 10,
) -> None:
    """Boot the composed profile and keep it running until Ctrl-C / SIGTERM, hot-reloading its user layers.

    Example: dshctl --home ~/.dsh --profile web host run
    """
    import asyncio

    from dshctl.host.hostlog import HostLog
    from dshctl.host.runner import HostOptions, run_host

    check_format(log_format, ("rich", "json"))
    s = effective(ctx, home, profile)
    options = HostOptions(home=s.home, profile=s.profile, patches=list(patch or []), resume=resume,
                          skip_unavailable=skip_unavailable, run_for=run_for, apply_timeout=apply_timeout, watch=watch)
    if fleet is not None or host_id is not None:
        from dshctl.cli.fleet_cmd import fleet_host
        code = fleet_host(options, HostLog(log_format), fleet, host_id, prefix, lease_ttl)
        raise typer.Exit(code)
    code = asyncio.run(run_host(options, HostLog(log_format)))
    raise typer.Exit(code)


def reload(ctx: typer.Context, home: HomeOpt = None, profile: ProfileOpt = None,
           fmt: FormatOpt = "text",
           trial: Annotated[Optional[float], typer.Option(
               "--trial", help="Apply on trial: revert automatically after SECONDS unless confirmed.",
               metavar="SECONDS", show_default=False)] = None,
           confirm: Annotated[bool, typer.Option(
               "--confirm", help="Keep the pending trial (it becomes the last-good tree).")] = False) -> None:
    """Blocks until the reload is done. Exit 0 applied (or confirmed), 4 rejected (old tree kept) or
    nothing to confirm, 5 applied then rolled back, 6 no host.

    Example: dshctl --home ~/.dsh reload --trial 60, then dshctl --home ~/.dsh reload --confirm
    """
    from dshctl.errors import UsageError
    from dshctl.host.outcome import EXIT_CODES

    check_format(fmt)
    if trial is not None and confirm:
        raise UsageError("--trial and --confirm exclude each other",
                         hint="start a trial with --trial SECONDS, keep it later with --confirm")
    if trial is not None and not 0 < trial <= 86400:
        raise UsageError(f"--trial takes 0 < SECONDS <= 86400, not {trial:g}", hint="e.g. --trial 60")
    s = effective(ctx, home, profile)
    request = {"op": "confirm"} if confirm else {"op": "reload", **({"trial": trial} if trial else {})}
    response = _ask(s, request, fmt)
    outcome = response["outcome"]
    if fmt == "json":
        from dshctl.cli.common import print_json
        print_json(outcome)
    else:
        from dshctl.cli.host_view import print_outcome
        print_outcome(outcome)
    raise typer.Exit(EXIT_CODES.get(outcome["verdict"], 1))


def status(ctx: typer.Context, home: HomeOpt = None, profile: ProfileOpt = None,
           fmt: FormatOpt = "text") -> None:
    """The running tree with fiber states, and running vs on disk vs last good. Exit 6 when no host runs.

    Example: dshctl --profile web status
    """
    check_format(fmt)
    s = effective(ctx, home, profile)
    doc = _ask(s, {"op": "status"}, fmt)["status"]
    if fmt == "json":
        from dshctl.cli.common import print_json
        print_json(doc)
    else:
        from dshctl.cli.host_view import print_status
        print_status(doc)


def _ask(s, payload: dict, fmt: str) -> dict:
    """One control request; no host means exit 6 (with ``{"host": null}`` for JSON callers)."""
    import sys

    from dshctl.host import control, state_dir
    from dshctl.host.outcome import EXIT_NO_HOST

    path = state_dir.socket_path(s.home, s.profile)
    try:
        return control.request(path, payload)
    except control.NoHost as err:
        if fmt == "json":
            from dshctl.cli.common import print_json
            print_json({"host": None, "rows": [], "last_reload": None, "error": err.message})
        from dshctl.cli.common import given_options, repeat_options

        hint = repeat_options(err.hint or "", given_options())
        sys.stderr.write(f"dshctl: {err.message} (profile {s.profile!r}, socket {path})\n"
                         f"  hint: {hint}\n")
        raise typer.Exit(EXIT_NO_HOST) from None
