"""``@dshctl/status-page``: the running tree as a page (``/status``) and as JSON (``/status.json``).

The data comes from the ``host`` service the runner provides (the same document as
``dshctl status --format json``); without a host it reports the registry's plugin names only.
"""
from __future__ import annotations

import html

from dshctl.host.plugins.logger import log_for

name = "@dshctl/status-page"
inject = ["http"]
schema = {
    "type": "object",
    "default": {},
    "properties": {"path": {"type": "string", "pattern": "^/", "default": "/status"}},
}


def snapshot(ctx) -> dict:
    host = ctx.get("host")
    if host is not None:
        return host.status()
    return {"host": None, "rows": [], "last_reload": None}


def render(doc: dict) -> str:
    def rows(items) -> str:
        if not items:
            return ""
        out = []
        for row in items:
            state = html.escape(str(row.get("state")))
            out.append(f"<li><b>{html.escape(str(row.get('id')))}</b> "
                       f"<code>{html.escape(str(row.get('name')))}</code> "
                       f"<span class='{state.lower()}'>{state}</span>{rows(row.get('children'))}</li>")
        return "<ul>" + "".join(out) + "</ul>"
    last = doc.get("last_reload") or {}
    summary = html.escape(str(last.get("summary", "no reload yet")))
    return ("<!doctype html><meta charset=utf-8><title>dshctl host</title>"
            "<style>body{font-family:sans-serif}.active{color:green}.failed{color:red}</style>"
            f"<h1>dshctl host</h1><p>last reload: {summary}</p>{rows(doc.get('rows'))}"
            "<p><a href='status.json'>JSON</a></p>")


def apply(ctx, config):
    path = config["path"]
    ctx.http.route(ctx, "GET", path, lambda request: render(snapshot(ctx)))
    ctx.http.route(ctx, "GET", path + ".json", lambda request: snapshot(ctx))
    log = log_for(ctx, "status-page")
    if log is not None:
        log.info(f"status page at {ctx.http.url}{path.lstrip('/')}")
