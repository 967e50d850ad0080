"""The built-in plugins on the real runtime (and, for presets, the real loader): http, status page,
timer, logger, tools (with a property test of the visibility rules) and agent presets."""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.host.plugins import http as http_plugin
from dshctl.host.plugins import logger as logger_plugin
from dshctl.host.plugins import status_page, timer
from dshctl.host.plugins.tools import GLOBAL, Scope, ToolError, ToolRegistry, visible
from dshctl.runtime import Context, InlinePlugin, State, ValidationError

from .helpers import InProcess, make_home, run_async, until, write


async def fetch(url: str, method: str = "GET", token: str = "") -> tuple[int, str]:
    host, _, rest = url.removeprefix("http://").partition("/")
    name, port = host.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(name, int(port))
    json_type = "" if method == "GET" else \
        f"Content-Type: application/json\r\nContent-Length: 0\r\nX-Dshctl-Token: {token}\r\n"
    writer.write(f"{method} /{rest} HTTP/1.1\r\nHost: {host}\r\n{json_type}Connection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


async def capture_ctx(root: Context, inject=None):
    box = {}
    fiber = root.plugin(InlinePlugin(lambda ctx, cfg: box.update(ctx=ctx), inject=inject))
    await fiber
    return fiber, box["ctx"]


@run_async()
async def test_http_routes_are_effects_of_the_registering_plugin():
    root = Context()
    server_fiber = await root.plugin(http_plugin, {"port": 0})
    server = root.get("http")
    client, ctx = await capture_ctx(root, ["http"])
    ctx.http.route(ctx, "GET", "/hello", lambda request: {"hi": request.query.get("who")})
    assert await fetch(server.url + "hello?who=me") == (200, '{\n  "hi": "me"\n}\n')
    assert (await fetch(server.url + "hello", "POST", server.token))[0] == 405
    assert (await fetch(server.url + "nope"))[0] == 404
    index = json.loads((await fetch(server.url))[1])
    assert any(r.startswith("GET /hello") for r in index["routes"])
    await client.dispose()                              # unloading the plugin removes its route
    assert (await fetch(server.url + "hello"))[0] == 404
    await server_fiber.dispose()                        # and unloading the server closes the port
    with pytest.raises(OSError):
        await fetch(server.url)


@run_async()
async def test_http_answers_a_malformed_request_with_400_and_keeps_serving():
    root = Context()
    fiber = await root.plugin(http_plugin, {"port": 0})
    server = root.get("http")
    for head in (b"GARBAGE\r\n\r\n", b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: lots\r\n\r\n"):
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(head)
        await writer.drain()
        assert (await reader.read()).startswith((b"HTTP/1.1 400 ", b"HTTP/1.0 400 "))
        writer.close()
    assert (await fetch(server.url))[0] == 200
    await fiber.dispose()


@run_async()
async def test_http_refuses_non_loopback_hosts_and_reports_busy_ports():
    root = Context()
    fiber = root.plugin(http_plugin, {"host": "0.0.0.0", "port": 0})
    with pytest.raises(ValidationError):
        await fiber
    first = await root.plugin(http_plugin, {"port": 0})
    port = root.get("http").port
    second = root.plugin(http_plugin, {"port": port})
    with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
        await second
    assert second.state is State.FAILED and first.state is State.ACTIVE


@run_async()
async def test_a_failing_handler_is_a_500_not_a_dead_server():
    root = Context()
    await root.plugin(http_plugin, {"port": 0})
    _, ctx = await capture_ctx(root, ["http"])
    ctx.http.route(ctx, "GET", "/bad", lambda request: 1 / 0)
    status, body = await fetch(root.get("http").url + "bad")
    assert status == 500 and "ZeroDivisionError" in body
    assert (await fetch(root.get("http").url))[0] == 200


@run_async()
async def test_status_page_serves_html_and_json_through_http():
    root = Context()

    class FakeHost:
        def status(self):
            return {"host": {"pid": 1}, "rows": [{"id": "x", "name": "n", "state": "ACTIVE", "children": []}],
                    "last_reload": {"summary": "reload applied at 12:00: 1 row(s) changed"}}
    root.provide("host", FakeHost())
    await root.plugin(http_plugin, {"port": 0})
    page = await root.plugin(status_page, {})
    url = root.get("http").url
    status, body = await fetch(url + "status.json")
    assert status == 200 and json.loads(body)["rows"][0]["id"] == "x"
    status, body = await fetch(url + "status")
    assert status == 200 and "<b>x</b>" in body and "reload applied at 12:00" in body
    await page.dispose()
    assert (await fetch(url + "status"))[0] == 404


@run_async()
async def test_timer_ticks_emit_events_and_stop_on_unload():
    root = Context()
    await root.plugin(logger_plugin, {"level": "info"})
    ticks = []
    root.on("timer/tick", ticks.append)
    fiber = await root.plugin(timer, {"interval": 0.02})
    await until(lambda: len(ticks) >= 3, what="three ticks")
    assert ticks[:3] == [1, 2, 3]
    assert ("info", "tick 1") in root.get("logger").lines
    await fiber.dispose()
    count = len(ticks)
    await asyncio.sleep(0.08)
    assert len(ticks) == count


def test_logger_drops_messages_below_its_level():
    log = logger_plugin.PluginLogger("warn")
    log.info("hidden")
    log.tagged("x").error("shown")
    assert log.lines == [("error", "shown")]


# ---- tools --------------------------------------------------------------------------------------
@run_async()
async def test_tools_layering_restrictions_and_own_registrations():
    root = Context()
    await root.plugin(__import__("dshctl.host.plugins.tools", fromlist=["x"]), {})
    tools: ToolRegistry = root.get("tools")
    plugin_fiber, ctx = await capture_ctx(root)
    for name in ("read", "write", "shell"):
        tools.register(ctx, name, {"from": "global"})
    tools.scope(ctx, "preset:code", GLOBAL, deny=["shell"])
    tools.register(ctx, "write", {"from": "preset"}, scope="preset:code")
    tools.scope(ctx, "session:1", "preset:code")
    tools.register(ctx, "shell", {"from": "session"}, scope="session:1")
    view = tools.view("session:1")
    assert view == {"read": {"from": "global"}, "write": {"from": "preset"}, "shell": {"from": "session"}}
    assert "shell" not in tools.view("preset:code")     # the restriction filters the inherited tool
    with pytest.raises(ToolError, match="reserved"):
        tools.register(ctx, "run_code", {})
    with pytest.raises(ToolError, match="unsupported output schema"):
        tools.register(ctx, "odd", {"output_schema": {"type": 12}})
    await plugin_fiber.dispose()                         # registrations and scopes are effects
    assert tools.view(GLOBAL) == {} and set(tools.scopes) == {GLOBAL}


names = st.sampled_from(["a", "b", "c", "d"])
layers = st.dictionaries(names, st.integers(0, 9), max_size=4)
rules = st.tuples(st.lists(names, max_size=2), st.one_of(st.none(), st.lists(names, max_size=3)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(layers, rules), min_size=1, max_size=4))
def test_visibility_matches_the_nearest_ancestor_model(chain_spec):
    scope = None
    for own, (deny, allow) in chain_spec:
        scope = Scope(f"s{0 if scope is None else len(scope.chain())}", scope, dict(own), tuple(deny),
                      None if allow is None else tuple(allow))
    chain = scope.chain()
    expected = {}
    for name in "abcd":
        if name in scope.own:                           # own registrations win over everything
            expected[name] = scope.own[name]
            continue
        holder = next((s for s in reversed(chain[:-1]) if name in s.own), None)  # nearest ancestor
        allowed = all(name not in s.deny and (s.allow is None or name in s.allow) for s in chain)
        if holder is not None and allowed:
            expected[name] = holder.own[name]
    assert visible(scope) == expected


# ---- agent presets ------------------------------------------------------------------------------
PRESET_ROWS = """\
    - id: tools
      name: "@dshctl/tools"
    - id: agent-presets
      name: "@dshctl/agent-presets"
      config: {default: standard}
"""


@run_async()
async def test_agent_presets_discover_mount_and_scope_sessions(tmp_path):
    home = make_home(tmp_path, PRESET_ROWS)
    write(home / ".agent-presets" / "reviewer" / "agent.cordis.yml",
          "- id: reviewer-tools\n  name: \"@dshctl/tools\"\n  config:\n    allow: [read, grep]\n")
    async with InProcess(home) as host:
        presets = host.root.get("agentPresets")
        listed = {p["id"]: p for p in presets.list()}
        assert {"standard", "minimal", "reviewer"} <= set(listed)
        assert listed["reviewer"]["trust"] == "user"
        tools = host.root.get("tools")
        holder, ctx = await capture_ctx(host.root)
        for name in ("read", "grep", "shell"):
            tools.register(ctx, name, {})
        assert await presets.open_session(ctx, "s1") == "standard"
        assert await presets.open_session(ctx, "s2", "reviewer") == "reviewer"
        assert set(tools.view("session:s1")) == {"read", "grep", "shell"}
        assert set(tools.view("session:s2")) == {"read", "grep"}      # the preset's allow rule
        mount = presets.standing["standard"]
        await presets.open_session(ctx, "s3", "standard")
        assert presets.standing["standard"] is mount                  # one standing mount, shared
        with pytest.raises(Exception, match='preset "nope" not found'):
            await presets.open_session(ctx, "s4", "nope")
        await holder.dispose()
        assert "session:s1" not in tools.scopes and "s1" not in presets.sessions


@run_async()
async def test_timer_timeouts_are_effects_of_the_caller():
    root = Context()
    await root.plugin(timer, {"interval": 60, "log": False})
    fired = []
    fiber, ctx = await capture_ctx(root)
    root.get("timer").set_timeout(ctx, 0.02, lambda: fired.append("early"))
    root.get("timer").set_timeout(ctx, 1.0, lambda: fired.append("late"))
    await until(lambda: fired, what="the early timeout")
    await fiber.dispose()                   # the pending timeout is cancelled with its owner
    await asyncio.sleep(1.2)                # (the margin is wide: a loaded loop may be late)
    assert fired == ["early"]
