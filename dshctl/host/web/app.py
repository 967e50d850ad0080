"""The browser app's shell and its status/settings API, mounted by ``@dshctl/status-page``.

``GET /`` the page (``static/``), ``/ui/app.js`` and ``/ui/app.css`` its assets; ``GET /api/status``
the app's view of the host (the status document with secrets redacted, the reload history, the
Settings panels, the live agents) and ``GET /api/status/events`` the same as Server-Sent Events, sent
whenever it changes; ``POST /api/reload/confirm {}`` keeps a pending trial reload (as ``dshctl reload
--confirm``). The sessions and chat API is in ``chat.py``.
"""
from __future__ import annotations

import re
from pathlib import Path

from .hub import Hub
from .messages import EventStream, Response

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {"/": ("index.html", "text/html; charset=utf-8"),
          "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
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


def app_state(ctx) -> dict:
    host, http, agents = ctx.get("host"), ctx.get("http"), ctx.get("agents")
    return {
        "status": host_status(ctx),
        "history": [redact(o.to_json()) for o in getattr(host, "reload_history", [])][::-1],
        "panels": sorted(http.panels.values(), key=lambda p: p["title"]) if http is not None else [],
        "agents": agents.list() if agents is not None else [],
    }


def _without_clock(doc: dict) -> dict:
    info = (doc.get("status") or {}).get("host")
    if isinstance(info, dict):
        return {**doc, "status": {**doc["status"], "host": {k: v for k, v in info.items() if k != "uptime_s"}}}
    return doc


async def confirm_trial(ctx, request):
    host = ctx.get("host")
    if host is None or getattr(host, "trials", None) is None:
        return Response.error(409, "no host runs this profile")
    outcome = (await host.trials.confirm("web")).to_json()
    return Response.json(outcome, 200 if outcome["verdict"] == "confirmed" else 409)


def install(ctx) -> None:
    http = ctx.http
    for path, (file, content_type) in ASSETS.items():
        body = (STATIC / file).read_bytes()
        http.route(ctx, "GET", path, lambda request, body=body, ct=content_type: Response(200, body, ct))
    hub = Hub(lambda: app_state(ctx), period=0.5, ignore=_without_clock)
    ctx.effect(lambda: hub.close, "web app status feed")
    http.route(ctx, "GET", "/api/status", lambda request: app_state(ctx))
    http.route(ctx, "GET", "/api/status/events", lambda request: EventStream(hub.stream()))
    http.route(ctx, "POST", "/api/reload/confirm", lambda request: confirm_trial(ctx, request))
    from .chat import install as install_chat
    install_chat(ctx)
