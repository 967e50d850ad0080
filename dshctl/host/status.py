"""The status document: running tree vs the files on disk vs the last-good record.

Shape (``dshctl status --format json``): ``{"host": {...}, "rows": [{"id", "name", "state", "config",
"children": [...]}, ...], "last_reload": {...} | null, "subagents"?: [{"id", "parent", "label", "provider",
"mode", "model", "state"}, ...]}`` (the live sub-agents, when an ``@dshctl/subagents`` row runs); ``host.drift`` says in words how the three
trees compare, e.g. "reload failed at 12:03: old tree still running".
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from dshctl.errors import DshctlError

from . import lastgood
from .composer import RestartRequired

if TYPE_CHECKING:  # pragma: no cover
    from .runner import Host


def disk_state(host: "Host") -> tuple[dict, dict | None]:
    """The parts of the status read from files (the composition on disk, the last-good record): the
    slow part, and safe off the event loop once the composer has booted (the browser app's Status feed
    reads it in a thread so a token stream is not held up)."""
    return _on_disk(host), _last_good(host)


def host_status(host: "Host", disk_parts: tuple[dict, dict | None] | None = None) -> dict:
    disk, good = disk_parts if disk_parts is not None else disk_state(host)
    info = {
        "pid": os.getpid(), "profile": host.options.profile, "home": str(host.options.home),
        "profile_dir": str(host.profile_dir), "socket": str(host.socket_path),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(host.started_at)),
        "uptime_s": round(time.time() - host.started_at, 1), "source": host.source,
        "running_digest": host.digest, "on_disk": disk, "last_good": good,
        "reloads": host.reloader.passes if host.reloader else 0,
        "reloading": bool(host.reloader and (host.reloader.lock.locked() or host.reloader.dirty)),
        "modules": host.modules.summary() if host.modules else None,
        "trial": host.trials.pending.to_json() if host.trials.pending else None,
    }
    info["drift"] = drift(host, disk, good)
    doc = {"host": info, "rows": host.loader.tree_snapshot() if host.loader else [],
           "last_reload": host.last_reload.to_json() if host.last_reload else None}
    children = live_children(host)
    if children is not None:
        doc["subagents"] = children
    return doc


def live_children(host: "Host") -> list[dict] | None:
    """The sub-agents live in this host now; None (no key in the document) without ``@dshctl/subagents``."""
    root = getattr(host, "root", None)
    lister = getattr(root.get("subagents") if root is not None else None, "live_children", None)
    return lister() if lister is not None else None


def _on_disk(host: "Host") -> dict:
    try:
        composed = host.composer.compose()
    except RestartRequired as err:
        return {"digest": None, "error": str(err), "restart_required": True}
    except DshctlError as err:
        return {"digest": None, "error": str(err)}
    return {"digest": composed.digest or lastgood.rows_digest(composed.rows)}


def _last_good(host: "Host") -> dict | None:
    try:
        record = lastgood.load(host.last_good_path)
    except DshctlError as err:
        return {"digest": None, "error": str(err), "path": str(host.last_good_path)}
    if record is None:
        return None
    return {"digest": record.digest, "saved_at": record.saved_at, "path": str(record.path)}


def drift(host: "Host", disk: dict, good: dict | None) -> list[str]:
    """Sentences comparing running, on-disk and last-good trees (empty list: all three agree)."""
    lines = []
    last = host.last_reload
    if disk.get("digest") != host.digest:
        if last is not None and not last.ok:
            lines.append(last.summary())
        if disk.get("restart_required"):
            lines.append("the files on disk need a host restart (bundle membership changed)")
        elif last is not None and not last.ok:
            pass
        elif disk.get("error"):
            lines.append(f"the files on disk do not compose: {disk['error']}")
        else:
            lines.append("the files on disk differ from the running tree (a reload is pending)")
    if good is None:
        lines.append("no last-good record yet")
    elif good.get("digest") != host.digest and host.trials.pending is None:
        lines.append("the running tree is not the last-good record (it has rows that failed to start)")
    if host.modules is not None and host.modules.restart_required:
        lines.append(f"dshctl's own code changed on disk ({len(host.modules.restart_required)} file(s)): "
                     "restart the host to load it")
    trial = host.trials.pending
    if trial is not None:
        lines.append("a trial reload is pending until " + time.strftime("%H:%M:%S", time.localtime(trial.deadline))
                     + ": `dshctl reload --confirm` keeps it, else the previous tree comes back")
    started = host.reloader.pass_started if host.reloader else None
    if started is not None:
        lines.append("a reload has been running since " + time.strftime("%H:%M:%S", time.localtime(started))
                     + ": the rows below may be half-changed")
    if host.source == "last-good":
        lines.append("booted from the last-good record")
    return lines
