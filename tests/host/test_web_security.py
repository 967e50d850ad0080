"""The host's web server as an attacker meets it (issue 26): DNS rebinding, cross-site writes, hostile
heads, slowloris, idle floods. Real sockets on 127.0.0.1, the real aiohttp stack; each test fails on
the hand-written server this one replaced."""
from __future__ import annotations

import asyncio
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.host.plugins import http as http_plugin
from dshctl.host.web import guard
from dshctl.runtime import Context, InlinePlugin

from .helpers import run_async


async def server_with_state(**config):
    """An http row plus a plugin with a state-changing route, as the loop-agent bundle has."""
    root = Context()
    fiber = await root.plugin(http_plugin, {"port": 0, **config})
    state = {"continuation": "default"}

    def apply(ctx, cfg):
        def change(request):
            body = request.json()
            state["continuation"] = body["continuation"] if isinstance(body, dict) else request.body.decode()
            return {"continuation": state["continuation"]}
        ctx.http.route(ctx, "POST", "/api/loop-agent/continuation", change)
        ctx.http.route(ctx, "GET", "/status.json", lambda request: {"config": "secret-ish"})
    await root.plugin(InlinePlugin(apply, inject=["http"]))
    return fiber, root.get("http"), state


async def exchange(port: int, data: bytes, timeout: float = 10.0) -> tuple[int | None, bytes]:
    """Send ``data`` raw; the status of the answer (None if the server closed without one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        answer = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None
    return status, answer.partition(b"\r\n\r\n")[2]


def request(method: str, path: str, port: int, headers: dict, body: bytes = b"") -> bytes:
    head = [f"{method} {path} HTTP/1.1", "Connection: close", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@run_async()
async def test_a_dns_rebinding_host_cannot_read_the_status():
    fiber, server, _ = await server_with_state()
    port = server.port
    for host in (f"attacker.example:{port}", "attacker.example", f"127.0.0.1.nip.io:{port}", f"127.0.0.1:{port + 1}"):
        status, body = await exchange(port, request("GET", "/status.json", port, {"Host": host}))
        assert status == 421 and b"secret-ish" not in body, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"app.localhost:{port}"):
        status, body = await exchange(port, request("GET", "/status.json", port, {"Host": host}))
        assert status == 200 and b"secret-ish" in body, host
    await fiber.dispose()   # closes the port


@run_async()
async def test_a_cross_site_text_plain_post_cannot_change_the_continuation():
    fiber, server, state = await server_with_state()
    port = server.port
    host = f"127.0.0.1:{port}"
    token = {"X-Dshctl-Token": server.token}      # even with the token, the other rules stand alone
    csrf = request("POST", "/api/loop-agent/continuation", port,
                   {**token, "Host": host, "Origin": "http://evil.example", "Content-Type": "text/plain"}, b"pwned")
    assert (await exchange(port, csrf))[0] == 403
    plain = request("POST", "/api/loop-agent/continuation", port,
                    {**token, "Host": host, "Origin": "null", "Content-Type": "application/json"},
                    b'{"continuation": "pwned"}')
    assert (await exchange(port, plain))[0] == 403
    fetch_site = request("POST", "/api/loop-agent/continuation", port,
                         {**token, "Host": host, "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
                         b'{"continuation": "pwned"}')
    assert (await exchange(port, fetch_site))[0] == 403
    no_json = request("POST", "/api/loop-agent/continuation", port,
                      {**token, "Host": host, "Content-Type": "text/plain"}, b"pwned")
    assert (await exchange(port, no_json))[0] == 415
    for wrong in ({}, {"X-Dshctl-Token": "guessed"}, {"X-Dshctl-Token": server.token[:-1]}):
        local_user = request("POST", "/api/loop-agent/continuation", port,
                             {**wrong, "Host": host, "Content-Type": "application/json"}, b'{"continuation": "x"}')
        status, body = await exchange(port, local_user)
        assert status == 403 and b"X-Dshctl-Token" in body
    assert state["continuation"] == "default"
    same_origin = request("POST", "/api/loop-agent/continuation", port,
                          {**token, "Host": host, "Origin": f"http://{host}", "Content-Type": "application/json"},
                          b'{"continuation": "mine"}')
    assert (await exchange(port, same_origin))[0] == 200
    curl = request("POST", "/api/loop-agent/continuation", port,
                   {**token, "Host": host, "Content-Type": "application/json; charset=utf-8"},
                   b'{"continuation": "cli"}')
    assert (await exchange(port, curl))[0] == 200 and state["continuation"] == "cli"
    await fiber.dispose()   # closes the port


@run_async()
async def test_hostile_lengths_are_clean_refusals_and_the_server_goes_on():
    fiber, server, state = await server_with_state(maxBody=1000)
    port, host = server.port, f"127.0.0.1:{server.port}"
    huge = (f"POST /api/loop-agent/continuation HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-Dshctl-Token: {server.token}\r\n"
            f"Content-Length: {'9' * 5000}\r\n\r\n").encode()
    assert (await exchange(port, huge))[0] in (400, 413)
    over = request("POST", "/api/loop-agent/continuation", port,
                   {"Host": host, "Content-Type": "application/json", "X-Dshctl-Token": server.token},
                   b'{"continuation": "' + b"x" * 2000 + b'"}')
    assert (await exchange(port, over))[0] == 413
    assert state["continuation"] == "default"
    assert (await exchange(port, request("GET", "/status.json", port, {"Host": host})))[0] == 200
    await fiber.dispose()   # closes the port


@run_async()
async def test_a_body_that_never_arrives_is_408():
    fiber, server, state = await server_with_state(bodyTimeout=0.3)
    port, host = server.port, f"127.0.0.1:{server.port}"
    slow = (f"POST /api/loop-agent/continuation HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-Dshctl-Token: {server.token}\r\n"
            f"Content-Length: 100\r\n\r\n{{").encode()
    assert (await exchange(port, slow, timeout=5))[0] == 408
    assert state["continuation"] == "default"
    await fiber.dispose()   # closes the port


async def _closed(reader: asyncio.StreamReader, within: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), within) is not None
    except asyncio.TimeoutError:
        return False


@run_async()
async def test_slowloris_connections_are_closed_at_the_header_timeout():
    fiber, server, _ = await server_with_state(headerTimeout=0.5)
    port = server.port
    pairs = [await asyncio.open_connection("127.0.0.1", port) for _ in range(30)]
    for _, writer in pairs:
        writer.write(b"GET /status.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")   # and never the rest
        await writer.drain()
    await asyncio.sleep(0.2)
    for _, writer in pairs:
        writer.write(b"b")       # a byte now and then must not buy more time
        await writer.drain()
    closed = await asyncio.gather(*(_closed(reader, 5.0) for reader, _ in pairs))
    assert all(closed)
    for _, writer in pairs:
        writer.close()
    assert (await exchange(port, request("GET", "/status.json", port, {"Host": "127.0.0.1"})))[0] == 200
    await fiber.dispose()   # closes the port


@run_async()
async def test_idle_connections_are_capped_with_503():
    fiber, server, _ = await server_with_state(maxConnections=8, headerTimeout=30)
    port = server.port
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(8)]
    await asyncio.sleep(0.1)
    status, body = await exchange(port, request("GET", "/status.json", port, {"Host": "127.0.0.1"}), timeout=5)
    assert status == 503 and b"too many connections" in body
    for _, writer in idle:
        writer.close()
    await asyncio.sleep(0.2)
    assert (await exchange(port, request("GET", "/status.json", port, {"Host": "127.0.0.1"})))[0] == 200
    await fiber.dispose()   # closes the port


# ---- the rules themselves ---------------------------------------------------------------------------
NAMES = st.text(st.sampled_from("abcxyz0189.-:[]"), min_size=0, max_size=30)


@settings(max_examples=300, deadline=None)
@given(host=NAMES, port=st.integers(1, 65535))
def test_an_accepted_host_always_names_loopback_on_the_bound_port(host, port):
    why = guard.host_refusal(host, port)
    if why is None:
        name, given_port = guard.split_host(host)
        assert guard.is_loopback_name(name) and given_port in (None, port)


@settings(max_examples=300, deadline=None)
@given(origin=st.one_of(st.none(), st.text(max_size=40)), method=st.sampled_from(["POST", "PUT", "DELETE", "PATCH"]))
def test_a_write_from_a_browser_needs_exactly_this_origin(origin, method):
    host = "127.0.0.1:8787"
    why = guard.origin_refusal(method, host, origin, None)
    assert (why is None) == (origin is None or origin.strip().lower() == "http://" + host)
    assert guard.origin_refusal("GET", host, origin, "cross-site") is None


def test_each_rule_has_its_own_status():
    assert guard.refusal("GET", {"host": "evil.example"}, 80)[0] == 421
    assert guard.refusal("POST", {"host": "localhost:80", "origin": "http://evil.example",
                                  "content-type": "application/json"}, 80)[0] == 403
    assert guard.refusal("POST", {"host": "localhost:80", "content-type": "text/plain"}, 80)[0] == 415
    assert guard.refusal("POST", {"host": "[::1]:80", "content-type": "application/json"}, 80) is None
    assert json.dumps(guard.refusal("GET", {}, 80)).startswith("[421")


def test_the_token_file_is_private_kept_and_replaced_when_loosened(tmp_path):
    import os
    import stat

    from dshctl.host.web import token as tokens
    first, path = tokens.load_or_create(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and len(first) >= 32
    assert tokens.load_or_create(tmp_path)[0] == first            # a restart keeps the open page working
    os.chmod(path, 0o644)                                          # readable by others: no longer a secret
    second, _ = tokens.load_or_create(tmp_path)
    assert second != first and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    path.write_text("short\n")
    assert tokens.load_or_create(tmp_path)[0] not in (second, "short")
