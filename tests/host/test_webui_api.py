"""The browser app's API on the real server, in process: its routes, panels and live feed are effects
of their rows, secrets are never served, and bad requests are clean refusals. httpx is the client."""
from __future__ import annotations

import asyncio
import json

import httpx

from dshctl.host.plugins import http as http_plugin
from dshctl.host.plugins import status_page
from dshctl.host.web.app import REDACTED, redact
from dshctl.runtime import Context, InlinePlugin

from .helpers import run_async


class FakeHost:
    reload_history = []

    def status(self):
        return {"host": {"pid": 1, "uptime_s": 1.0}, "last_reload": None, "rows": [
            {"id": "llm", "name": "@dshctl/llm-openai", "state": "ACTIVE",
             "config": {"model": "m", "apiKey": "sk-very-secret", "headers": {"Authorization": "Bearer x"}},
             "children": []}]}


async def app():
    root = Context()
    root.provide("host", FakeHost())
    await root.plugin(http_plugin, {"port": 0})
    page = await root.plugin(status_page, {})
    return root, root.get("http"), page


def client(server) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=server.url.rstrip("/"), timeout=10,
                             headers={"X-Dshctl-Token": server.token})


@run_async()
async def test_the_app_is_served_and_its_routes_go_with_the_row():
    root, server, page = await app()
    async with client(server) as http:
        index = await http.get("/")
        assert index.status_code == 200 and 'src="/ui/app.js"' in index.text
        assert (await http.get("/ui/app.js")).headers["content-type"].startswith("text/javascript")
        assert "default-src 'self'" in index.headers["content-security-policy"]
        state = (await http.get("/api/status")).json()
        assert state["status"]["rows"][0]["id"] == "llm" and state["panels"] == []
        assert "GET /api/status" in " ".join((await http.get("/routes.json")).json()["routes"])
        await page.dispose()
        assert (await http.get("/api/status")).status_code == 404
        assert "routes" in (await http.get("/")).json()       # the route index is back


def test_no_secret_is_served():
    doc = redact(FakeHost().status())
    config = doc["rows"][0]["config"]
    assert config["apiKey"] == REDACTED and config["headers"]["Authorization"] == REDACTED
    assert config["model"] == "m" and "sk-very-secret" not in json.dumps(doc)


@run_async()
async def test_status_json_over_http_is_redacted():
    root, server, page = await app()
    async with client(server) as http:
        body = (await http.get("/status.json")).text
        assert "sk-very-secret" not in body and REDACTED in body
        assert "sk-very-secret" not in (await http.get("/api/status")).text


@run_async()
async def test_panels_are_effects_and_the_live_feed_shows_them_and_ends_with_the_row():
    root, server, page = await app()
    box = {}
    owner = root.plugin(InlinePlugin(lambda ctx, cfg: box.update(ctx=ctx), inject=["http"]))
    await owner
    ctx = box["ctx"]
    async with client(server) as http:
        async with http.stream("GET", "/api/status/events") as feed:
            assert feed.headers["content-type"] == "text/event-stream"
            lines = feed.aiter_lines()

            async def next_doc():
                async for line in lines:
                    if line.startswith("data: "):
                        return json.loads(line[6:])
            assert (await asyncio.wait_for(next_doc(), 10))["panels"] == []
            ctx.http.panel(ctx, "demo", "Demo", "/demo.js")
            doc = await asyncio.wait_for(next_doc(), 10)
            assert [p["id"] for p in doc["panels"]] == ["demo"]
            await owner.dispose()                                   # the panel goes with its plugin
            assert (await asyncio.wait_for(next_doc(), 10))["panels"] == []
            await page.dispose()                                    # and the feed with the app's row
            assert await asyncio.wait_for(next_doc(), 10) is None


@run_async()
async def test_chat_and_archive_refuse_bad_requests_cleanly():
    root, server, page = await app()
    async with client(server) as http:
        for path, body in (("/api/chat/send", {"text": ""}), ("/api/chat/send", [1]),
                           ("/api/chat/stop", {}), ("/api/sessions/archive", {"session": "x"})):
            answer = await http.post(path, json=body)
            assert answer.status_code == 400 and "expected a JSON body" in answer.json()["error"], path
        no_agents = await http.post("/api/chat/send", json={"session": None, "text": "hi"})
        assert no_agents.status_code == 409 and "agents" in no_agents.json()["error"]
        no_workspace = await http.post("/api/sessions/archive", json={"session": "x", "archived": True})
        assert no_workspace.status_code == 409
        assert (await http.get("/api/chat/events")).status_code == 400


TRIAL_ROWS = """\
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha, tag: one}
    - {"id": "http", "name": "@dshctl/http", "config": {"port": 0}}
    - {"id": "status-page", "name": "@dshctl/status-page"}
"""


@run_async()
async def test_a_trial_reload_is_shown_and_confirmed_from_the_app(tmp_path):
    from .helpers import InProcess, make_home, user_file, write
    home = make_home(tmp_path, TRIAL_ROWS)
    async with InProcess(home, watch=False) as host:
        server = host.root.get("http")
        async with client(server) as http:
            nothing = await http.post("/api/reload/confirm", json={})
            assert nothing.status_code == 409 and nothing.json()["verdict"] == "no-trial"
            write(user_file(home), "- id: a\n  config: {service: alpha, tag: two}\n")
            outcome = await host.trials.start(60, "control")
            assert outcome.verdict == "applied"
            state = (await http.get("/api/status")).json()
            assert state["status"]["host"]["trial"]["deadline"] == outcome.trial["deadline"]
            confirmed = await http.post("/api/reload/confirm", json={})
            assert confirmed.status_code == 200 and confirmed.json()["verdict"] == "confirmed"
            state = (await http.get("/api/status")).json()
            assert state["status"]["host"]["trial"] is None
            assert [o["verdict"] for o in state["history"][:2]] == ["confirmed", "applied"]


@run_async()
async def test_a_trial_reload_is_reverted_from_the_app_before_its_deadline(tmp_path):
    from .helpers import InProcess, make_home, user_file, write
    home = make_home(tmp_path, TRIAL_ROWS)
    async with InProcess(home, watch=False) as host:
        server = host.root.get("http")
        async with client(server) as http:
            nothing = await http.post("/api/reload/revert", json={})
            assert nothing.status_code == 409 and nothing.json()["verdict"] == "no-trial"
            before = host.digest
            write(user_file(home), "- id: a\n  config: {service: alpha, tag: two}\n")
            outcome = await host.trials.start(60, "control")
            assert outcome.verdict == "applied" and host.digest != before
            reverted = await http.post("/api/reload/revert", json={})
            assert reverted.status_code == 200 and reverted.json()["verdict"] == "reverted"
            assert host.digest == before and host.trials.pending is None
            [row] = [r for r in (await http.get("/api/status")).json()["status"]["rows"] if r["id"] == "a"]
            assert row["config"]["tag"] == "one"                      # the previous tree runs again
            state = (await http.get("/api/status")).json()
            assert state["status"]["host"]["trial"] is None
            assert [o["verdict"] for o in state["history"][:2]] == ["reverted", "applied"]
            again = await http.post("/api/reload/confirm", json={})   # nothing left to confirm
            assert again.status_code == 409


@run_async()
async def test_the_status_feed_follows_the_hosts_changes_at_once_not_on_its_slow_refresh(tmp_path):
    """A trial started, then reverted: each is on the feed within 2 s (the slow refresh is 10 s), and
    with the host quiet in between the status is not recomputed."""
    from .helpers import InProcess, make_home, user_file, write
    home = make_home(tmp_path, TRIAL_ROWS)
    async with InProcess(home, watch=False) as host:
        server = host.root.get("http")
        async with client(server) as http:
            async with http.stream("GET", "/api/status/events") as feed:
                lines = feed.aiter_lines()

                async def next_doc():
                    async for line in lines:
                        if line.startswith("data: "):
                            return json.loads(line[6:])
                assert (await asyncio.wait_for(next_doc(), 10))["status"]["host"]["trial"] is None
                write(user_file(home), "- id: a\n  config: {service: alpha, tag: two}\n")
                calls = []
                real = host.status
                host.status = lambda: calls.append(1) or real()
                await asyncio.sleep(1.0)
                assert calls == []                                   # quiet host: no recomputation
                outcome = await host.trials.start(60, "control")
                doc = await asyncio.wait_for(next_doc(), 2)
                assert doc["status"]["host"]["trial"]["deadline"] == outcome.trial["deadline"]
                await host.trials.revert("web")
                doc = await asyncio.wait_for(next_doc(), 2)
                assert doc["status"]["host"]["trial"] is None and doc["history"][0]["verdict"] == "reverted"
                assert len(calls) <= 4                                # once per change, not per poll
