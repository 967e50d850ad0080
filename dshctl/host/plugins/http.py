"""``@dshctl/http``: the host's web server on loopback, where other plugins register routes.

``ctx.http.route(ctx, method, path, handler)`` is an effect of the *caller's* context: the route is
gone when the registering plugin unloads. A handler gets a :class:`Request` and returns a
:class:`Response`, an :class:`EventStream` (Server-Sent Events), a ``str`` (HTML), or any JSON-able
value; ``/routes.json`` lists the routes (and so does ``/`` until the app takes it).
``ctx.http.panel(ctx, id, title, script)`` adds an entry to the browser app's Settings page the same
way. Only loopback addresses are accepted: the host is a local tool, never a network service; the
request rules (Host, Origin, content type, token) and limits are in ``dshctl.host.web`` (docs/webui.md).
"""
from __future__ import annotations

import inspect

from dshctl.host.plugins.logger import log_for
from dshctl.host.web.messages import EventStream, Request, Response

__all__ = ["EventStream", "HttpServer", "Request", "Response"]

name = "@dshctl/http"
schema = {
    "type": "object",
    "default": {},
    "properties": {
        "host": {"enum": ["127.0.0.1", "localhost", "::1"], "default": "127.0.0.1"},
        "port": {"type": "integer", "minimum": 0, "maximum": 65535, "default": 8787},
        "headerTimeout": {"type": "number", "exclusiveMinimum": 0, "default": 10},
        "bodyTimeout": {"type": "number", "exclusiveMinimum": 0, "default": 10},
        "maxBody": {"type": "integer", "minimum": 0, "default": 1024 * 1024},
        "maxConnections": {"type": "integer", "minimum": 1, "default": 128},
    },
}


class HttpServer:
    """The ``http`` service: the route table, the Settings panels and the listening socket."""

    def __init__(self, host: str, port: int, limits=None, token_dir=None):
        self.host, self.port = host, port
        self.limits = limits
        self.token_dir = token_dir      # where http.token lives (the host's state dir); None: in memory
        self.token: str | None = None
        self.token_path = None
        self.routes: dict[tuple[str, str], tuple] = {}
        self.panels: dict[str, dict] = {}
        self.version = 0            # bumped on every route or panel change (the app refreshes)
        self._web = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def route(self, ctx, method: str, path: str, handler):
        """Register ``handler`` for ``method path`` as an effect of ``ctx``; returns the effect handle."""
        key = (method.upper(), path)

        def add():
            if key in self.routes:
                raise ValueError(f"route {key[0]} {path} is already registered by {self.routes[key][1]}")
            self.routes[key] = (handler, ctx.fiber.name)
            self.version += 1
            return lambda: self._drop(self.routes, key)
        return ctx.effect(add, f"http.route({key[0]} {path})")

    def panel(self, ctx, panel_id: str, title: str, script: str):
        """A Settings entry: ``script`` is a same-origin URL of an ES module exporting
        ``mount(element, api)`` (docs/webui.md); an effect of ``ctx`` like a route."""
        def add():
            if panel_id in self.panels:
                raise ValueError(f"settings panel {panel_id!r} is already registered by "
                                 f"{self.panels[panel_id]['owner']}")
            self.panels[panel_id] = {"id": panel_id, "title": title, "script": script, "owner": ctx.fiber.name}
            self.version += 1
            return lambda: self._drop(self.panels, panel_id)
        return ctx.effect(add, f"http.panel({panel_id})")

    def _drop(self, table: dict, key) -> None:
        if table.pop(key, None) is not None:
            self.version += 1

    @property
    def app_url(self) -> str:
        """The URL to open: it hands the page this host's token (docs/webui.md)."""
        return f"{self.url}#token={self.token}" if self.token else self.url

    async def start(self):
        from dshctl.host.web import token as tokens
        from dshctl.host.web.server import Limits, WebServer   # aiohttp: only when a server starts
        if self.token_dir is not None:
            self.token, self.token_path = tokens.load_or_create(self.token_dir)
        else:
            self.token = tokens.new_token()
        hint = f" (it is in {self.token_path})" if self.token_path else ""
        self._web = WebServer(self.dispatch, self.host, self.port, self.limits or Limits(), self.token, hint)
        self.port = await self._web.start()   # port 0 picks a free one
        return self.stop

    async def stop(self) -> None:
        if self._web is not None:
            await self._web.stop()
            self._web = None

    @property
    def refused(self) -> dict:
        return dict(self._web.refused) if self._web is not None else {}

    async def dispatch(self, request: Request) -> Response | EventStream:
        method = "GET" if request.method == "HEAD" else request.method
        entry = self.routes.get((method, request.path))
        if entry is None:
            if request.path in ("/", "/routes.json") and method == "GET":
                return Response.of(self.index())
            allowed = any(path == request.path for _, path in self.routes)
            return Response.error(405, "method not allowed") if allowed else Response.error(404, "not found")
        try:
            result = entry[0](request)
            if inspect.isawaitable(result):
                result = await result
            return Response.of(result)
        except Exception as exc:  # noqa: BLE001 - a failing handler must not take the server down
            return Response.error(500, f"{type(exc).__name__}: {exc}")

    def index(self) -> dict:
        return {"routes": sorted(f"{m} {p}  ({owner})" for (m, p), (_, owner) in self.routes.items())}


def limits_of(config: dict):
    from dshctl.host.web.server import Limits
    return Limits(header_timeout=config["headerTimeout"], body_timeout=config["bodyTimeout"],
                  max_body=config["maxBody"], max_connections=config["maxConnections"])


async def apply(ctx, config):
    host = ctx.get("host")
    token_dir = None
    if host is not None and getattr(host, "socket_path", None) is not None:
        from dshctl.host.state_dir import ensure
        token_dir = ensure(host.socket_path.parent)
    server = HttpServer(config["host"], config["port"], limits_of(config), token_dir)
    try:
        stop = await server.start()
    except OSError as exc:
        raise OSError(exc.errno, f"cannot listen on {config['host']}:{config['port']}: {exc.strerror}") from None
    ctx.effect(lambda: stop, "http.listen")
    ctx.provide("http", server)
    log = log_for(ctx, "http")
    if log is not None:
        log.info(f"listening on {server.url}")
