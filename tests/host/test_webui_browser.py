"""The browser app in Debian's chromium against ``dshctl host run`` (issue 26): the loop-agent story
(arm with /forever, rounds appear, Stop stops that session only, Archive stops it, the Settings switch
off stops all, the user layer's override removes the Settings entry live), a rolled-back reload on
Status with its file:line:col, and the CSRF and DNS-rebinding refusals as a browser meets them."""
from __future__ import annotations

import http.server
import json
import re
import threading
import time
import urllib.parse
import urllib.request

from playwright.sync_api import expect

from tests.agents.loop_agent_helpers import loop_agent_home
from tests.host.browser import shoot
from tests.host.helpers import HostProcess, bundle_dir, eventually, user_file, write

TIMEOUT_MS = 20_000
expect.set_options(timeout=TIMEOUT_MS)   # a loaded 2-core CI machine, not a sign of failure


def browser_home(tmp_path, replies, **kw):
    home = loop_agent_home(tmp_path, replies, **kw)
    patch = bundle_dir(home) / "cordis.patch.yml"
    rows = ('    - {"id": "status-page", "name": "@dshctl/status-page"}\n'
            '    - {"id": "c", "name": "./plugins/boom.py"}\n')
    write(patch, patch.read_text() + rows)
    return home


def port_of(home) -> int:
    patch = (bundle_dir(home) / "cordis.patch.yml").read_text()
    return int(re.search(r'"port": (\d+)', patch).group(1))


def app_url(home, port: int) -> str:
    """The URL `dshctl host run` logs: it hands the page the host's token (0600 beside the socket)."""
    token = (home / "profiles" / "p" / ".dshctl" / "http.token").read_text().strip()
    return f"http://127.0.0.1:{port}/#token={token}"


def loop_state(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/loop-agent/state", timeout=5) as response:
        return json.loads(response.read())


def replies(n, delay_ms=0):
    return [{"text": f"answer {i}", "delayMs": delay_ms} for i in range(1, n + 1)]


def session_of(page) -> str:
    """The session the page shows (a new one once the host answered the first message)."""
    # page.evaluate, not wait_for_function: the app's CSP forbids the eval the latter needs
    hash_ = eventually(lambda: (h := page.evaluate("location.hash")).startswith("#/sessions/") and h,
                       what="the page to open the session")
    return urllib.parse.unquote(hash_[len("#/sessions/"):])


def arm(page, message) -> str:
    message.fill("/forever")
    message.press("Enter")
    session = session_of(page)
    expect(page.locator("#log .msg.user", has_text="go on").first).to_be_visible(timeout=TIMEOUT_MS)
    return session


def test_the_loop_agent_story_in_the_browser(browser, tmp_path):
    home = browser_home(tmp_path, replies(1000, delay_ms=150), runner={"continuation": "go on"})
    port = port_of(home)
    with HostProcess(home):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        started = time.monotonic()
        page.goto(app_url(home, port))
        message = page.get_by_role("textbox", name="Message")
        expect(message).to_be_visible()
        first_render_ms = (time.monotonic() - started) * 1000
        rendered = page.evaluate("performance.getEntriesByName('dshctl-first-render')[0].startTime")
        print(f"first render of the chat page: {rendered:.0f} ms after navigation start "
              f"({first_render_ms:.0f} ms wall, with the test's own round trips)")

        message.fill("hello")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.locator("#log .msg.assistant", has_text="answer 1")).to_be_visible()
        first = session_of(page)
        assert loop_state(port)["attachedAgents"] == 0
        arm(page, message)                                       # /forever: rounds appear
        page.get_by_role("button", name="New session").click()
        second = arm(page, message)
        assert second != first
        shoot(page, "sessions", tmp_path)

        page.get_by_role("link", name="Settings").click()
        switch = page.get_by_role("switch", name="Endless loop")
        expect(switch).to_have_attribute("aria-checked", "true")
        expect(page.get_by_text("2 sessions armed")).to_be_visible()
        shoot(page, "settings", tmp_path)

        page.goto(f"http://127.0.0.1:{port}/#/sessions/{first}")  # Stop stops that session only
        expect(page.get_by_role("button", name="Stop")).to_be_enabled()
        page.get_by_role("button", name="Stop").click()
        expect(page.locator("#log .msg.note", has_text="aborted (user)").first).to_be_visible()
        eventually(lambda: loop_state(port)["attachedAgents"], 1, what="one session still armed")

        item = page.locator(f'#groups li[data-session="{second}"]')   # Archive stops the other
        item.get_by_role("button", name="Archive", exact=True).click()
        expect(item.get_by_role("button", name="Unarchive", exact=True)).to_be_visible()
        eventually(lambda: loop_state(port)["attachedAgents"], 0, what="the archived session's loop to stop")

        arm(page, page.get_by_role("textbox", name="Message"))   # the first again, then the switch off
        eventually(lambda: loop_state(port)["attachedAgents"], 1, what="the first session re-armed")
        page.get_by_role("link", name="Settings").click()
        expect(page.get_by_text("1 session armed")).to_be_visible()
        page.get_by_role("switch", name="Endless loop").click()
        expect(page.get_by_role("switch", name="Endless loop")).to_have_attribute("aria-checked", "false")
        expect(page.get_by_text("0 sessions armed")).to_be_visible()
        assert loop_state(port)["attachedAgents"] == 0

        layer = user_file(home)                                  # the hard switch: the entry goes, live
        write(layer, layer.read_text() + "- id: loop-runner\n  disabled: true\n")
        expect(page.get_by_role("switch", name="Endless loop")).to_have_count(0)
        expect(page.get_by_text("No bundle adds settings in this profile.")).to_be_visible()
        page.close()
    assert first_render_ms < 5000


class Attacker(http.server.BaseHTTPRequestHandler):
    """Another site: its page tries to rewrite the loop-agent's continuation on the host."""
    target = ""

    def do_GET(self):
        page = f"""<!doctype html><body><form id=f method=POST action="{self.target}/api/loop-agent/continuation"
          enctype="text/plain"><input name='{{"continuation":"pwned-by-form","x":"' value='"}}'></form>
          <script>
          fetch("{self.target}/api/loop-agent/continuation", {{method: "POST", mode: "no-cors",
                headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{continuation: "pwned"}})}})
            .finally(() => {{ document.title = "sent"; document.getElementById("f").submit(); }});
          </script>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


ASK = {"name": "ask_user_question", "arguments": {"question": "Which way?", "options": [
    {"label": "left"}, {"label": "right", "recommended": True}]}}


def test_a_question_is_answered_on_the_page_status_shows_a_rollback_and_attacks_fail(browser, tmp_path):
    script = [{"toolCalls": [ASK]}, {"text": "went the way you chose"}, *replies(5)]
    home = browser_home(tmp_path, script, runner={"continuation": "go on"})
    port = port_of(home)
    with HostProcess(home):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app_url(home, port))
        page.get_by_role("textbox", name="Message").fill("which way should I go?")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_text("Which way?", exact=True)).to_be_visible()
        page.get_by_role("button", name="right (recommended)").click()
        expect(page.locator("#log .msg.assistant", has_text="went the way you chose")).to_be_visible()
        expect(page.locator("#log .msg.tool .result")).to_contain_text("The user chose: right")

        page.goto(f"http://127.0.0.1:{port}/#/status")
        expect(page.locator('[data-row="c"]')).to_contain_text("ACTIVE")
        layer = user_file(home)
        write(layer, layer.read_text() + "- id: c\n  config: {fail: on purpose}\n")
        last = page.get_by_role("region", name="Last reload")
        expect(last).to_contain_text("rolled back")
        expect(last.locator(".loc").first).to_have_text(re.compile(r"cordis\.patch\.yml:\d+:\d+: $"))
        expect(page.get_by_role("region", name="Reload history")).to_contain_text("rolled-back")
        shoot(page, "status", tmp_path)

        Attacker.target = f"http://127.0.0.1:{port}"
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            attack = browser.new_page()
            with attack.expect_response(re.compile(r"/api/loop-agent/continuation$")) as form_post:
                attack.goto(f"http://127.0.0.1:{evil.server_address[1]}/")   # the fetch, then the form
            assert form_post.value.status == 403
            attack.wait_for_url(re.compile(r"/api/loop-agent/continuation$"))
            expect(attack.locator("body")).to_contain_text("may not change anything here")
            attack.close()
        finally:
            evil.shutdown()
        assert loop_state(port)["continuation"] == "go on"

        stranger = browser.new_context().new_page()      # the page without the host's token: reads, no writes
        stranger.goto(f"http://127.0.0.1:{port}/")
        stranger.get_by_role("textbox", name="Message").fill("let me in")
        stranger.get_by_role("button", name="Send", exact=True).click()
        expect(stranger.get_by_role("alert")).to_contain_text("open the link `dshctl host run` logged")
        stranger.context.close()

        assert page.goto(f"http://localhost:{port}/status.json").status == 200
        rebound = page.goto(f"http://rebind.test:{port}/status.json")   # rebinding: refused by Host
        assert rebound.status == 421 and "rows" not in rebound.text()
        page.close()


ECHO = {"name": "echo", "arguments": {"text": "RAN-THE-TOOL"}}


def approval_browser_home(tmp_path, script):
    """The browser home plus an approval row asking for ``echo`` (the probe plugin's tool)."""
    from tests.agents.loop_rows import PROBE
    home = browser_home(tmp_path, script, runner={"continuation": "go on"}, probe={})
    patch = bundle_dir(home) / "cordis.patch.yml"
    rows = ('    - {"id": "approval", "name": "@dshctl/approval", "config": {"ask": ["echo"]}}\n'
            '    - {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"mode": "read-only"}}\n')
    write(patch, patch.read_text() + rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    return home


def tool_results(home) -> list[str]:
    from dshctl.agents.session.store import SessionStore
    store = SessionStore(home)
    [info] = store.list()
    log = store.open(info.id)
    try:
        return [e["data"]["message"]["content"][0]["content"][0]["text"]
                for e in log.events if e["type"] == "tool/result"]
    finally:
        log.close()


def test_an_approval_is_denied_then_allowed_once_in_the_chat(browser, tmp_path):
    script = [{"toolCalls": [ECHO]}, {"text": "told no"}, {"toolCalls": [ECHO]}, {"text": "told yes"}]
    home = approval_browser_home(tmp_path, script)
    port = port_of(home)
    with HostProcess(home):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app_url(home, port))
        message = page.get_by_role("textbox", name="Message")
        message.fill("echo it")
        page.get_by_role("button", name="Send", exact=True).click()
        card = page.get_by_role("listitem", name="Approval needed: echo")
        expect(card).to_contain_text("RAN-THE-TOOL")                  # the call's arguments are shown
        shoot(page, "approval", tmp_path)
        card.get_by_role("button", name="Deny").click()
        expect(page.locator("#log .msg.assistant", has_text="told no")).to_be_visible()
        expect(card).to_have_count(0)                                 # answered: the card goes
        expect(page.locator("#log .msg.tool .result").first).to_contain_text('the user rejected tool "echo"')

        message.fill("now really")
        message.press("Enter")
        page.get_by_role("listitem", name="Approval needed: echo").get_by_role("button", name="Allow once").click()
        expect(page.locator("#log .msg.assistant", has_text="told yes")).to_be_visible()
        page.close()
    # what the model read: the refusal as the first call's result, the tool's output for the second
    assert tool_results(home) == ['Error: the user rejected tool "echo"', "RAN-THE-TOOL"]


def session_events(home, session: str) -> list[dict]:
    from dshctl.agents.session.store import SessionStore
    log = SessionStore(home).open(session)
    try:
        return list(log.events)
    finally:
        log.close()


def test_slash_commands_in_the_chat_box_as_in_agent_chat(browser, tmp_path):
    home = approval_browser_home(tmp_path, replies(6))
    port = port_of(home)
    with HostProcess(home):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app_url(home, port))
        message = page.get_by_role("textbox", name="Message")
        log = page.locator("#log")

        message.fill("/help")
        message.press("Enter")
        expect(log).to_contain_text("/preset NAME — use another agent preset")
        assert page.evaluate("location.hash") == "#/sessions"          # no message was sent
        message.fill("/permissions workspace-write")
        message.press("Enter")
        expect(log).to_contain_text("permissions workspace-write from the next message")
        message.fill("hello")
        message.press("Enter")
        expect(page.locator("#log .msg.assistant", has_text="answer 1")).to_be_visible()
        first = session_of(page)

        message.fill("/preset no-such-preset")       # checked as typed, before any send
        expect(page.get_by_role("alert")).to_contain_text('preset "no-such-preset"')
        expect(page.get_by_role("alert")).to_contain_text("dshctl preset list")
        message.press("Enter")                        # refused: the line stays, nothing is sent
        expect(message).to_have_value("/preset no-such-preset")
        message.fill("again")
        expect(page.get_by_role("alert")).to_have_count(0)
        message.press("Enter")
        message.fill("/model other-model")
        message.press("Enter")
        message.fill("/model")
        message.press("Enter")
        expect(log).to_contain_text("model other-model from the next message")

        message.fill("/new")
        message.press("Enter")
        expect(page.locator("#chat-title")).to_have_text("New session")
        message.fill("bye")
        message.press("Enter")
        expect(page.locator("#log .msg.user", has_text="bye")).to_be_visible()
        second = eventually(lambda: (s := session_of(page)) != first and s, what="a new session")
        page.close()
    assert second != first
    presets = [e["data"] for e in session_events(home, first) if e["type"] == "permission/preset"]
    assert presets == [{"preset": "workspace-write"}]
    texts = [json.dumps(e["data"]) for e in session_events(home, first) if e["type"] == "user/message"]
    assert any("hello" in t for t in texts)
    assert not any("/help" in t or "/model" in t for t in texts)    # commands stay on the page


def row_config(port: int, row: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5) as response:
        rows = json.loads(response.read())["status"]["rows"]
    return next(r for r in rows if r["id"] == row).get("config") or {}


def test_a_running_trial_is_reverted_with_the_status_pages_button(browser, tmp_path):
    import subprocess
    from tests.host.helpers import DSHCTL
    home = browser_home(tmp_path, replies(1), runner={"continuation": "go on"})
    port = port_of(home)
    with HostProcess(home, "p", "--no-watch"):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app_url(home, port))
        page.get_by_role("link", name="Status").click()
        layer = user_file(home)
        write(layer, layer.read_text() + "- id: c\n  config: {tag: tried}\n")
        started = subprocess.run([DSHCTL, "--home", str(home), "reload", "--profile", "p", "--trial", "120"],
                                 capture_output=True, text=True, timeout=60)
        assert started.returncode == 0, started.stderr
        trial = page.get_by_role("region", name="Trial")
        expect(trial).to_contain_text("unless you confirm this one")
        expect(trial.get_by_role("button", name="Confirm")).to_be_visible()
        assert row_config(port, "c").get("tag") == "tried"                  # the tried config runs
        trial.get_by_role("button", name="Revert").click()
        expect(trial).to_have_count(0)
        expect(page.get_by_role("region", name="Last reload")).to_contain_text("revert")
        expect(page.get_by_role("region", name="Reload history")).to_contain_text("reverted")
        assert "tag" not in row_config(port, "c")                             # the previous one again
        page.close()
