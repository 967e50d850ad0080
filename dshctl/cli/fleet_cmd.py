"""``dshctl fleet publish|status|rollback``: one profile for many hosts, kept in etcd (docs/fleet.md).

Thin: the work is in dshctl/fleet/. The etcd client is imported only here, inside the commands."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from dshctl.cli.common import FormatOpt, HomeOpt, ProfileOpt, check_format, effective

EtcdOpt = Annotated[str, typer.Option(
    "--etcd", help="etcd client URL(s), comma-separated (e.g. http://127.0.0.1:2379).")]
PrefixOpt = Annotated[str, typer.Option("--prefix", help="The fleet's key prefix in etcd.")]
HELP = "Publish one profile to many hosts through etcd; see their verdicts; roll back."


def register(app: typer.Typer) -> None:
    group = typer.Typer(help=HELP, no_args_is_help=True)
    group.command("publish")(publish)
    group.command("status")(status)
    group.command("rollback")(rollback)
    app.add_typer(group, name="fleet")


def _run(coro_fn, url: str):
    import asyncio

    from dshctl.fleet.etcd import Etcd

    async def main():
        async with Etcd(url) as etcd:
            return await coro_fn(etcd)
    return asyncio.run(main())


def publish(ctx: typer.Context, etcd: EtcdOpt, prefix: PrefixOpt = "/dshctl", home: HomeOpt = None,
            profile: ProfileOpt = None,
            patch: Annotated[Optional[List[Path]], typer.Option(
                "--patch", help="An extra patch file composed after the user layers (repeatable).",
                show_default=False)] = None,
            canary: Annotated[int, typer.Option(
                "--canary", help="Stage it: N live hosts first, the rest once all N applied it.")] = 0,
            canary_wait: Annotated[float, typer.Option(
                "--canary-wait", help="Seconds the canaries have to report it applied.")] = 60.0,
            fmt: FormatOpt = "text") -> None:
    """Lint and compose the profile as `profile dump` does and write it as the fleet's next revision.

    Refused (nothing written) on any composition error, patch warning or lint error, and when another
    publish wins the race. Example: dshctl --profile web fleet publish --etcd http://127.0.0.1:2379
    """
    from dshctl.fleet import publish as P
    from dshctl.fleet.keys import Keys

    check_format(fmt)
    s = effective(ctx, home, profile)
    keys = Keys(prefix)
    if canary < 0 or not 0 < canary_wait <= 3600:
        from dshctl.errors import UsageError
        raise UsageError("--canary takes N >= 0 and --canary-wait 0 < SECONDS <= 3600",
                         hint="e.g. --canary 2 --canary-wait 30")
    built = P.build(s.home, s.profile, patch or [])   # refusals before any network
    if canary:
        from dshctl.fleet.rollout import publish_canary
        doc = _run(lambda e: publish_canary(e, keys, s.home, s.profile, patch or [], canary, canary_wait,
                                            built=built), etcd)
        staged = f" after canaries {', '.join(doc['canary'])} applied it"
    else:
        doc = _run(lambda e: P.publish(e, keys, s.home, s.profile, patch or [], built=built), etcd)
        staged = ""
    _say(doc, fmt, f"published revision {doc['revision']} of profile {doc['profile']!r} "
                   f"({len(doc['layers'])} layer(s), digest {doc['digest'][:12]}) under {keys.prefix}{staged}")


def rollback(etcd: EtcdOpt, to: Annotated[int, typer.Option("--to", help="The revision to return to.")],
             prefix: PrefixOpt = "/dshctl", fmt: FormatOpt = "text") -> None:
    """Publish revision REV's content again as the next revision (history only grows).

    Example: dshctl fleet rollback --etcd http://127.0.0.1:2379 --to 3
    """
    from dshctl.fleet import publish as P
    from dshctl.fleet.keys import Keys

    check_format(fmt)
    keys = Keys(prefix)
    doc = _run(lambda e: P.rollback(e, keys, to), etcd)
    _say(doc, fmt, f"published revision {doc['revision']}: the content of revision {to} under {keys.prefix}")


def status(etcd: EtcdOpt, prefix: PrefixOpt = "/dshctl", fmt: FormatOpt = "text") -> None:
    """Every live host with its revision and verdict, the hosts behind, the expired ones.

    Exit 0 only when every live host runs the latest revision. Example: dshctl fleet status --etcd URL -f json
    """
    from dshctl.fleet.keys import Keys
    from dshctl.fleet.status import fleet_status

    check_format(fmt)
    doc = _run(lambda e: fleet_status(e, Keys(prefix)), etcd)
    if fmt == "json":
        from dshctl.cli.common import print_json
        print_json(doc)
    else:
        _print_status(doc)
    raise typer.Exit(0 if doc["ok"] else 1)


def _say(doc: dict, fmt: str, line: str) -> None:
    if fmt == "json":
        from dshctl.cli.common import print_json
        print_json({k: v for k, v in doc.items() if k not in ("layers", "dump")})
    else:
        typer.echo(line)


def _print_status(doc: dict) -> None:
    typer.echo(f"latest revision: {doc['latest'] or 'none'} ({doc['prefix']})")
    rollout = doc.get("rollout")
    if rollout and rollout.get("canary"):
        typer.echo(f"  canary of revision {rollout['revision']} on {', '.join(rollout['canary'])}; "
                   f"the others stay on {rollout['stable']}")
    if rollout and rollout.get("halted"):
        typer.echo(f"  rollout of revision {rollout['revision']} halted: {rollout['halted'].get('why')}; "
                   f"every host stays on {rollout['stable']}")
    for h in doc["hosts"]:
        mark = "ok" if h["current"] else "BEHIND"
        typer.echo(f"  {h['host_id']}: revision {h.get('running_revision')} running (wants {h.get('wanted')}), revision "
                   f"{h.get('revision')} {h.get('verdict')} at {h.get('at')} [{mark}]")
        for row in h.get("failed_rows") or []:
            also = f" (config set at {row['config_loc']})" if row.get("config_loc") else ""
            typer.echo(f"    {row.get('loc') or '?'}: row {row.get('id')} ({row.get('name')}) failed: "
                       f"{row.get('reason')}{also}")
        for err in h.get("errors") or []:
            where = f"{err['loc']}: " if err.get("loc") else ""
            typer.echo(f"    {where}{err.get('message')}")
    for host_id in doc["expired"]:
        typer.echo(f"  {host_id}: gone (its lease expired)")
    if not doc["hosts"]:
        typer.echo("  no live hosts")


def fleet_host(options, log, url: Optional[str], host_id: Optional[str], prefix: str, lease_ttl: int) -> int:
    """``host run --fleet URL --host-id ID``: the host fed from etcd (dshctl/fleet/agent.py)."""
    import asyncio

    from dshctl.errors import UsageError
    from dshctl.fleet.agent import FleetOptions, run_fleet_host

    if not url or not host_id:
        raise UsageError("--fleet and --host-id go together",
                         hint="e.g. dshctl host run --fleet http://127.0.0.1:2379 --host-id web-1")
    if not 1 <= lease_ttl <= 3600:
        raise UsageError(f"--lease-ttl takes 1..3600 seconds, not {lease_ttl}", hint="e.g. --lease-ttl 10")
    from dshctl.fleet.etcd import split_endpoints
    split_endpoints(url)
    return asyncio.run(run_fleet_host(options, FleetOptions(url, host_id, prefix, lease_ttl), log))
