"""The browser app's shell and its status/settings API, mounted by ``@dshctl/status-page``.

``GET /`` the page (``static/``), ``/ui/app.js`` and ``/ui/app.css`` its assets; ``GET /api/status``
the app's view of the host (the status document with secrets redacted, the reload history, the
Settings panels, the live agents) and ``GET /api/status/events`` the same as Server-Sent Events, sent
whenever it changes; ``POST /api/reload/confirm {}`` keeps a pending trial reload (as ``dshctl reload
--confirm``), ``POST /api/reload/revert {}`` brings the previous tree back now (as its deadline would). The sessions and chat API is in ``chat.py``.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

from .hub import Hub
from .messages import EventStream, Response

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {"/": ("index.html", "text/html; charset=utf-8"),
          "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/ui/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
          "/ui/transcript.js": ("transcript.js", "text/javascript; charset=utf-8"),
          "/ui/app.css": ("app.css", "text/css; charset=utf-8")}
SECRET_KEY = re.compile(r"(api[-_]?key|token|secret|password|authorization|credential)", re.I)
REDACTED = "[redacted]"


def redact(value):
    """``value`` with every mapping entry whose key names a secret replaced: no API key is served."""
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and SECRET_KEY.search(k) and v not in (None, "")
                    else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def host_status(ctx) -> dict:
    host = ctx.get("host")
    if host is not None:
        return redact(host.status())
    return {"host": None, "rows": [], "last_reload": None}


async def host_status_off_loop(ctx) -> dict:
    """``host_status`` with its file reads (composing the layers on disk, the last-good record: tens of
    ms) in a thread, so the streams the loop writes meanwhile are not held up (docs/performance.md)."""
    host = ctx.get("host")
    composer = getattr(host, "composer", None)
    if host is None or not getattr(composer, "booted", False):
        return host_status(ctx)
    from dshctl.host.status import disk_state, host_status as status_of
    disk = await asyncio.to_thread(disk_state, host)
    return redact(status_of(host, disk))


def app_state(ctx, status: dict | None = None) -> dict:
    host, http, agents = ctx.get("host"), ctx.get("http"), ctx.get("agents")
    return {
        "status": host_status(ctx) if status is None else status,
        "history": [redact(o.to_json()) for o in getattr(host, "reload_history", [])][::-1],
        "panels": sorted(http.panels.values(), key=lambda p: p["title"]) if http is not None else [],
        "agents": agents.list() if agents is not None else [],
    }


def _without_clock(doc: dict) -> dict:
    info = (doc.get("status") or {}).get("host")
    if isinstance(info, dict):
        return {**doc, "status": {**doc["status"], "host": {k: v for k, v in info.items() if k != "uptime_s"}}}
    return doc


# Host log events that say the status document changed (reloads, rows, trials, module swaps, fleet, a
# fiber that failed at run time). Not plugin/ (a plugin's own log lines) nor the other fiber/ debug
# lines; the probe (last reload, trial, agents, panels) and the slow refresh catch the rest.
CHANGE_EVENTS = ("reload/", "row/", "host/", "hmr/", "fleet/", "fiber/failed")


class StatusFeed:
    """The Status feed: ``host.status()`` (it composes the files on disk) computed once per change the
    host logs, not per poll and not per client; the cheap in-memory parts (agents, panels, history)
    probed by one task, and the document encoded once for every client (:class:`Hub`)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._status: dict | None = None
        self._at = 0.0
        self._changes = 0
        self._encoded: tuple[object, bytes] = (None, b"")
        self.hub = Hub(self.document, ignore=_without_clock, probe=self.probe, encode=self.encode)

    def encode(self, doc: dict) -> bytes:
        """The document's JSON, its status part (the row tree: most of it) encoded once per status
        read rather than at every running/idle flip of an agent (docs/performance.md)."""
        status = doc["status"]
        if self._encoded[0] is not status:
            self._encoded = (status, json.dumps(status, default=str).encode())
        rest = json.dumps({k: v for k, v in doc.items() if k != "status"}, default=str).encode()
        return b'{"status": ' + self._encoded[1] + (b", " + rest[1:] if rest != b"{}" else b"}")

    async def document(self) -> dict:
        now = time.monotonic()
        if self._status is None or now - self._at >= self.hub.refresh:   # the slow refresh: what
            changes = self._changes                                     # changed without a log line
            status = await host_status_off_loop(self.ctx)
            if changes == self._changes:        # else a change came in meanwhile: read again next time
                self._status, self._at = status, now
            return app_state(self.ctx, status)
        return app_state(self.ctx, self._status)

    def probe(self):
        host, http, agents = self.ctx.get("host"), self.ctx.get("http"), self.ctx.get("agents")
        live = tuple((a.id, a.status) for a in agents.live.values()) if agents is not None else ()
        return (live, tuple(http.panels) if http is not None else (),
                id(getattr(host, "last_reload", None)), getattr(getattr(host, "trials", None), "pending", None))

    def on_log(self, event: str) -> None:
        if event.startswith(CHANGE_EVENTS):
            self.changed()

    def changed(self) -> None:
        self._status = None
        self._changes += 1
        self.hub.poke()


async def confirm_trial(ctx, request):
    host = ctx.get("host")
    if host is None or getattr(host, "trials", None) is None:
        return Response.error(409, "no host runs this profile")
    outcome = (await host.trials.confirm("web")).to_json()
    return Response.json(outcome, 200 if outcome["verdict"] == "confirmed" else 409)


async def revert_trial(ctx, request):
    host = ctx.get("host")
    if host is None or getattr(host, "trials", None) is None:
        return Response.error(409, "no host runs this profile")
    outcome = (await host.trials.revert("web")).to_json()
    return Response.json(outcome, 200 if outcome["verdict"] == "reverted" else 409)


def install(ctx) -> None:
    http = ctx.http
    for path, (file, content_type) in ASSETS.items():
        body = (STATIC / file).read_bytes()
        http.route(ctx, "GET", path, lambda request, body=body, ct=content_type: Response(200, body, ct))
    feed = StatusFeed(ctx)
    listeners = getattr(getattr(ctx.get("host"), "log", None), "listeners", None)
    if listeners is not None:
        listeners.append(feed.on_log)
        ctx.effect(lambda: lambda: listeners.remove(feed.on_log) if feed.on_log in listeners else None,
                   "web app status feed: host log listener")
    ctx.effect(lambda: feed.hub.close, "web app status feed")
    http.route(ctx, "GET", "/api/status", lambda request: app_state(ctx))
    http.route(ctx, "GET", "/api/status/events", lambda request: EventStream(feed.hub.stream()))
    http.route(ctx, "POST", "/api/reload/confirm", lambda request: confirm_trial(ctx, request))
    http.route(ctx, "POST", "/api/reload/revert", lambda request: revert_trial(ctx, request))
    from .chat import install as install_chat
    install_chat(ctx)
