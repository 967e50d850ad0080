"""``@dshctl/status-page``: the browser app (``/``: Sessions, Settings, Status; dshctl.host.web) and the
running tree as a plain page (``/status``) and as JSON (``/status.json``), and the two probes an
orchestrator asks (Kubernetes' liveness and readiness): ``/healthz`` answers 200 while the host serves,
``/readyz`` 200 when the running tree is what the files on disk compose to, else 503 with the reason
and the last reload's errors — so a pod whose new ConfigMap rolled back is taken out of service, not
restarted.

The data comes from the ``host`` service the runner provides (the same document as
``dshctl status --format json``, with secrets redacted); without a host it reports no rows.
"""
from __future__ import annotations

import html

from dshctl.host.plugins.logger import log_for
from dshctl.host.web.app import app_state, host_status, install as install_app

name = "@dshctl/status-page"
inject = ["http"]
schema = {
    "type": "object",
    "default": {},
    "properties": {"path": {"type": "string", "pattern": "^/", "default": "/status"},
                   "app": {"type": "boolean", "default": True}},
}


def snapshot(ctx) -> dict:
    return host_status(ctx)


def _rows(items) -> str:
    if not items:
        return ""
    out = []
    for row in items:
        state = html.escape(str(row.get("state")))
        failed = ""
        if row.get("error"):
            where = f"<code>{html.escape(str(row['loc']))}</code>: " if row.get("loc") else ""
            failed = f"<div class=error>{where}{html.escape(str(row['error']))}</div>"
        out.append(f"<li><b>{html.escape(str(row.get('id')))}</b> "
                   f"<code>{html.escape(str(row.get('name')))}</code> "
                   f"<span class='{state.lower()}'>{state}</span>{failed}{_rows(row.get('children'))}</li>")
    return "<ul>" + "".join(out) + "</ul>"


def _history(items) -> str:
    out = []
    for outcome in items:
        errors = "".join(f"<div class=error>{html.escape(str(e.get('loc') or ''))} "
                         f"{html.escape(str(e.get('message')))}</div>" for e in outcome.get("errors") or [])
        out.append(f"<li>{html.escape(str(outcome.get('summary')))}{errors}</li>")
    return "<h2>Reload history</h2><ol>" + "".join(out) + "</ol>" if out else ""


def render(doc: dict, history: list | None = None) -> str:
    last = doc.get("last_reload") or {}
    summary = html.escape(str(last.get("summary", "no reload yet")))
    return ("<!doctype html><meta charset=utf-8><title>dshctl host</title>"
            "<style>body{font-family:sans-serif}.active{color:green}.failed,.error{color:#b00020}</style>"
            f"<h1>dshctl host</h1><p>last reload: {summary}</p>{_rows(doc.get('rows'))}{_history(history or [])}"
            "<p><a href='status.json'>JSON</a> · <a href='/'>the app</a></p>")


def readiness(doc: dict) -> tuple[int, dict]:
    """(HTTP status, body) of ``/readyz`` for a status document: ready when what runs is what the
    files on disk compose to (a rolled-back reload leaves them apart until the files are fixed)."""
    info = doc.get("host")
    if not isinstance(info, dict):
        return 503, {"ready": False, "reason": "no host"}
    last = doc.get("last_reload") or {}
    disk = info.get("on_disk") or {}
    if disk.get("digest") is None:
        return 503, {"ready": False, "reason": f"the files on disk do not compose: {disk.get('error')}"}
    if disk["digest"] != info.get("running_digest"):
        return 503, {"ready": False, "reason": "the files on disk are not what runs (the last reload was "
                     f"{last.get('verdict', 'none')})", "summary": last.get("summary"),
                     "errors": last.get("errors") or []}
    return 200, {"ready": True, "last_reload": last.get("verdict")}


def apply(ctx, config):
    from dshctl.host.web.messages import Response

    ctx.http.route(ctx, "GET", "/healthz", lambda request: Response(200, b"ok\n"))
    def readyz(request):
        status, body = readiness(snapshot(ctx))
        return Response.json(body, status)
    ctx.http.route(ctx, "GET", "/readyz", readyz)
    path = config["path"]
    ctx.http.route(ctx, "GET", path, lambda request: render(snapshot(ctx), app_state(ctx)["history"]))
    ctx.http.route(ctx, "GET", path + ".json", lambda request: snapshot(ctx))
    if config["app"]:
        install_app(ctx)
    log = log_for(ctx, "status-page")
    if log is not None:
        log.info(f"status page at {ctx.http.url}{path.lstrip('/')}" + (f"; the app at {ctx.http.url}" if config["app"] else ""))
