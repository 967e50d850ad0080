"""Sessions and chat for the browser app, on the host's ``agents`` and ``workspace`` services.

``GET /api/sessions`` every session grouped by workspace (cwd), with archived/live/running;
``POST /api/sessions/archive {"session", "archived"}``; ``POST /api/chat/send {"session"|null, "text",
"mode": "followup"|"steer", "cwd"?, "preset"?, "model"?, "permissions"?}`` (the last three: what the page's
/preset, /model and /permissions chose, as ``agent chat`` sends them) queues a message (a new session when ``session`` is null) and
answers ``{"session"}``; ``GET /api/chat/events?session=ID[&after=SEQ]`` streams that session's events
after SEQ (or the ``Last-Event-ID`` a reconnecting browser sends), the log then every new one (SSE
``id:`` = the last seq, ``{"type": "event"}`` or ``{"type": "events", "events": [...]}`` for a burst;
follow.py, feed.py); ``GET /api/presets`` the agent presets ``/preset`` may name; ``POST /api/chat/stop {"session"}`` ends its running turn ``aborted``
(cause ``user``); ``POST /api/chat/answer {"session", "answer": {"option"}|{"text"}}`` answers the
``ask_user_question`` a streamed ``{"type": "ask", "question"}`` put to the page. Sessions are listed
through the session store's own API, never by path.
"""
from __future__ import annotations

import asyncio

from .asker import ASKERS, asker_for
from .messages import EventStream, Response

MODES = ("followup", "steer")


def _services(ctx):
    return ctx.get("agents"), ctx.get("workspace")


def _body(request) -> dict | None:
    body = request.json()
    return body if isinstance(body, dict) else None


def _session_id(value) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


async def sessions(ctx, request):
    agents, workspace = _services(ctx)
    if agents is None:
        return Response.error(409, "no agents service runs in this profile (add @dshctl/agents)")
    listed = await asyncio.to_thread(agents.store.list)
    archived = workspace.archived_session_ids if workspace is not None else frozenset()
    groups: dict[str, list] = {}
    for info in listed:
        row = info.to_json()
        row.pop("path", None)
        live = agents.live.get(info.id)
        row.update(archived=info.id in archived, live=live is not None,
                   running=live is not None and live.status == "running")
        if row.get("origin") == "subagent" or row.get("parentSession"):
            continue   # sub-agents appear in their parent's conversation, not in the list
        groups.setdefault(row.get("cwd") or "(no workspace)", []).append(row)
    return {"workspaces": [{"cwd": cwd, "sessions": rows} for cwd, rows in sorted(groups.items())],
            "archiving": workspace is not None}


def archive(ctx, request):
    body, (_, workspace) = _body(request), _services(ctx)
    if body is None or _session_id(body.get("session")) is None or not isinstance(body.get("archived"), bool):
        return Response.error(400, 'expected a JSON body {"session": "<id>", "archived": true|false}')
    if workspace is None:
        return Response.error(409, "no @dshctl/workspace row runs in this profile")
    change = workspace.archive if body["archived"] else workspace.unarchive
    return {"session": body["session"], "archived": body["archived"], "changed": change(body["session"])}


async def send(ctx, feeds, request):
    body, (agents, _) = _body(request), _services(ctx)
    if body is None or not isinstance(body.get("text"), str) or not body["text"].strip() \
            or body.get("mode", "followup") not in MODES:
        return Response.error(400, 'expected a JSON body {"session": "<id>"|null, "text": "...", '
                                   '"mode": "followup"|"steer"}')
    if agents is None:
        return Response.error(409, "no agents service runs in this profile (add @dshctl/agents)")
    session = body.get("session")
    if session is not None and _session_id(session) is None:
        return Response.error(400, '"session" must be a session id or null')
    cwd = body.get("cwd") if isinstance(body.get("cwd"), str) else None
    knobs = {k: body[k] for k in ("preset", "model", "permissions") if isinstance(body.get(k), str) and body[k]}
    try:
        agent = await agents.open(session, cwd=cwd, preset=knobs.get("preset"))
    except Exception as exc:  # noqa: BLE001 - unknown or busy session, no loop: the page shows it
        from dshctl.host.agent_ops import open_hint
        return Response.json({"error": str(exc) or type(exc).__name__, "hint": open_hint(exc)}, 409)
    if "model" in knobs:
        agent.options["model"] = knobs["model"]   # /model: this session's turns from now on
    from dshctl.host.agent_ops import choose_permissions
    problem = choose_permissions(ctx, agent, knobs)
    if problem is not None:
        return Response.json({"error": problem, "session": agent.id,
                              "hint": "permission presets: workspace-write, danger-full-access"}, 409)
    asker_for(agent)    # the page follows right after: a question asked before then waits for it
    feeds.attach(agent)  # a page already following the session follows this agent (maybe restored)
    (agent.steer if body.get("mode") == "steer" else agent.followup)(body["text"])
    return {"session": agent.id, "mode": body.get("mode", "followup")}


STOP_GRACE_S = 0.5   # Stop between two rounds of a loop stops the round that starts right after


async def stop(ctx, request):
    body, (agents, _) = _body(request), _services(ctx)
    if body is None or _session_id(body.get("session")) is None:
        return Response.error(400, 'expected a JSON body {"session": "<id>"}')
    agent = agents.get(body["session"]) if agents is not None else None
    if agent is None:
        return {"session": body["session"], "stopped": False}
    deadline = asyncio.get_running_loop().time() + STOP_GRACE_S
    while agent.status != "running" and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)    # the user saw a turn running: the loop's next one is a breath away
    running = agent.status == "running"
    if running:
        agent.abort({"kind": "user"})
    return {"session": body["session"], "stopped": running}


def _after(request) -> int:
    """The seq the page has: the browser's ``Last-Event-ID`` on a reconnect, else ``?after=``."""
    for value in (request.headers.get("last-event-id"), request.query.get("after")):
        try:
            return max(-1, int(value))
        except (TypeError, ValueError):
            continue
    return -1


async def events(ctx, feeds, request):
    agents, _ = _services(ctx)
    session = _session_id(request.query.get("session"))
    if agents is None or session is None:
        return Response.error(400, "expected ?session=<id> on a profile with an agents service")
    agent, stored = agents.live.get(session), None
    if agent is None:
        stored = await asyncio.to_thread(_stored_child, agents.store, session)
    if agent is None and stored is None:
        try:
            agent = await agents.open(session)
        except Exception as exc:  # noqa: BLE001
            return Response.error(404, str(exc) or type(exc).__name__)
    if agent is not None:
        first = {"type": "agent", "session": agent.id, "preset": getattr(agent, "preset", None),
                 "status": agent.status, "model": (agent.options or {}).get("model")}
    else:
        first = {"type": "agent", "session": session, "preset": None, "status": "settled",
                 "model": None, "subagent": True}
    return EventStream(feeds.stream(first["session"], agent, stored, _after(request), first))


def _stored_child(store, session: str) -> list[dict] | None:
    """A sub-agent's stored events (followed read-only), or None: a root session, or none by that id."""
    try:
        seen = store.read(session)
    except Exception:  # noqa: BLE001 - not found, a prefix: the agents service resolves or refuses it
        return None
    return seen.events if seen.header.get("origin") == "subagent" else None


def answer(ctx, request):
    body = _body(request)
    if body is None or _session_id(body.get("session")) is None or not isinstance(body.get("answer"), dict):
        return Response.error(400, 'expected a JSON body {"session": "<id>", "answer": {"option": "..."} '
                                   'or {"text": "..."}}')
    asker = ASKERS.get(body["session"])
    if asker is None or not asker.answer(body["answer"]):
        return Response.error(409, "this session is not waiting for an answer")
    return {"session": body["session"], "answered": True}


async def presets(ctx, request):
    """The presets ``/preset NAME`` may name (the ``agentPresets`` service re-scans its roots)."""
    service = ctx.get("agentPresets")
    if service is None:
        return {"available": False, "presets": [], "default": None}
    listed = await asyncio.to_thread(service.list)
    return {"available": True, "default": service.config.get("default"),
            "presets": [{"id": p["id"], "name": p["name"], "broken": p["broken"]} for p in listed]}


def install(ctx) -> None:
    from .follow import Feeds
    http, feeds = ctx.http, Feeds(ctx)
    feeds.install()
    http.route(ctx, "GET", "/api/sessions", lambda request: sessions(ctx, request))
    http.route(ctx, "POST", "/api/sessions/archive", lambda request: archive(ctx, request))
    http.route(ctx, "POST", "/api/chat/send", lambda request: send(ctx, feeds, request))
    http.route(ctx, "POST", "/api/chat/stop", lambda request: stop(ctx, request))
    http.route(ctx, "GET", "/api/chat/events", lambda request: events(ctx, feeds, request))
    http.route(ctx, "GET", "/api/presets", lambda request: presets(ctx, request))
    http.route(ctx, "POST", "/api/chat/answer", lambda request: answer(ctx, request))
