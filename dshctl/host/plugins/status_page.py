"""``@dshctl/status-page``: the browser app (``/``: Sessions, Settings, Status; dshctl.host.web) and the
running tree as a plain page (``/status``) and as JSON (``/status.json``).

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


def apply(ctx, config):
    path = config["path"]
    ctx.http.route(ctx, "GET", path, lambda request: render(snapshot(ctx), app_state(ctx)["history"]))
    ctx.http.route(ctx, "GET", path + ".json", lambda request: snapshot(ctx))
    if config["app"]:
        install_app(ctx)
    log = log_for(ctx, "status-page")
    if log is not None:
        log.info(f"status page at {ctx.http.url}{path.lstrip('/')}" + (f"; the app at {ctx.http.url}" if config["app"] else ""))
