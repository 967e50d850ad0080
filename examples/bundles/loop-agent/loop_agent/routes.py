"""The host routes the settings panel (or curl) talks to: the state, the switch, the continuation."""
from __future__ import annotations

import json
from pathlib import Path

from .state import write_field

PANEL = Path(__file__).resolve().parent / "panel.js"   # Settings → Endless loop, the browser half

VERSION = 1


def snapshot(runner) -> dict:
    state = runner.refresh()
    return {"version": VERSION, "enabled": state.enabled, "attachedAgents": runner.attached_agents(),
            "profile": runner.profile, "continuation": runner.continuation(),
            "defaultContinuation": runner.config["continuation"]}


def _body(request) -> dict | None:
    try:
        body = json.loads(request.body.decode("utf-8") or "null")
    except (UnicodeDecodeError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def install(ctx, runner) -> None:
    from dshctl.host.plugins.http import Response

    def bad(message: str):
        return Response(400, (json.dumps({"error": message}) + "\n").encode(), "application/json")

    def state(request):
        return snapshot(runner)

    def enabled(request):
        body = _body(request)
        if body is None or not isinstance(body.get("enabled"), bool):
            return bad('expected a JSON body {"enabled": true|false}')
        changed = write_field(runner.sidecar, "disabled", not body["enabled"])
        return {**snapshot(runner), "path": str(runner.sidecar), "changed": changed}

    def continuation(request):
        body = _body(request)
        if body is None or not isinstance(body.get("continuation"), str):
            return bad('expected a JSON body {"continuation": "..."} ("" restores the default)')
        changed = write_field(runner.sidecar, "continuation", body["continuation"] or None)
        return {**snapshot(runner), "path": str(runner.sidecar), "changed": changed}

    ctx.http.route(ctx, "GET", "/api/loop-agent/state", state)
    ctx.http.route(ctx, "POST", "/api/loop-agent/enabled", enabled)
    ctx.http.route(ctx, "POST", "/api/loop-agent/continuation", continuation)
    if hasattr(ctx.http, "panel"):   # hosts with the browser app: a Settings entry, gone when this row unloads
        script = PANEL.read_bytes()
        ctx.http.route(ctx, "GET", "/api/loop-agent/panel.js",
                       lambda request: Response(200, script, "text/javascript; charset=utf-8"))
        ctx.http.panel(ctx, "endless-loop", "Endless loop", "/api/loop-agent/panel.js")
