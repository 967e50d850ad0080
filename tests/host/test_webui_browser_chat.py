"""The chat in Debian's chromium against ``dshctl host run`` (issue 26): a delegating turn shows its
sub-agent at the tool call (label, model, state, stop reason), expandable to the child's transcript
while it streams; two tabs on one session both see every turn, the second opening mid-turn each
round; ``/preset`` is checked against the host's presets as it is typed; what is typed while a
message is on its way stays the user's."""
from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.agents.loop_agent_helpers import free_port
from tests.agents.loop_rows import agent_rows
from tests.agents.subagent_helpers import SUBAGENT_ROWS, call
from tests.host.browser import shoot
from tests.host.helpers import HostProcess, make_home, write
from tests.host.test_webui_browser import TIMEOUT_MS, session_of

PRESETS_ROW = {"id": "agent-presets", "name": "@dshctl/agent-presets", "config": {"default": "standard"}}


def chat_home(tmp_path, replies, extra=()):
    port = free_port()
    rows = [{"id": "http", "name": "@dshctl/http", "config": {"host": "127.0.0.1", "port": port}},
            {"id": "status-page", "name": "@dshctl/status-page"}, *extra]
    home = make_home(tmp_path, agent_rows(replies) + "".join(f"    - {json.dumps(r)}\n" for r in rows))
    return home, port


def open_app(browser, home, port):
    token = (home / "profiles" / "p" / ".dshctl" / "http.token").read_text().strip()
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"http://127.0.0.1:{port}/#token={token}")
    return page


def test_a_sub_agent_appears_at_its_tool_call_and_streams_its_transcript(browser, tmp_path):
    delegate = call("subagent_fork", {"description": "count the files", "prompt": "count them"}, "call-fork-1")
    child_text = "there are three files " * 12
    replies = [{"toolCalls": [delegate]}, {"when": "count them", "text": child_text, "delayMs": 3000},
               {"text": "the child counted three"}]
    home, port = chat_home(tmp_path, replies, SUBAGENT_ROWS)
    with HostProcess(home):
        page = open_app(browser, home, port)
        message = page.get_by_role("textbox", name="Message")
        message.fill("delegate the count")
        message.press("Enter")
        child = page.locator('#log li[data-call="call-fork-1"]').get_by_role("group", name="Sub-agent count the files")
        expect(child).to_contain_text("model scripted")
        expect(child).to_contain_text("running")
        child.get_by_text("Transcript").click()                 # expanded while the child streams
        nested = child.get_by_role("list", name="Transcript of count the files")
        expect(nested.locator(".msg.user")).to_contain_text("count them")
        expect(nested.locator(".msg.assistant[data-streaming]")).to_contain_text("there are")  # live, mid-reply
        expect(nested.locator(".msg.assistant").last).to_have_text(child_text.strip())
        expect(child).to_contain_text("settled")
        expect(child).to_contain_text("stop reason completed")
        expect(page.locator("#log > .msg.assistant", has_text="the child counted three")).to_be_visible()
        shoot(page, "subagent", tmp_path)

        session = session_of(page)                               # a page opened afterwards shows it too
        later = open_app(browser, home, port)
        later.goto(f"http://127.0.0.1:{port}/#/sessions/{session}")
        again = later.get_by_role("group", name="Sub-agent count the files")
        expect(again).to_contain_text("settled · stop reason completed")
        again.get_by_text("Transcript").click()
        expect(again.locator(".msg.assistant")).to_have_text(child_text.strip())
        later.close()
        page.close()


def test_two_tabs_on_one_session_both_see_every_turn_the_second_opening_mid_turn(browser, tmp_path):
    # each reply streams for 4 s: the mid-turn checks below must not race the turn's end on a slow
    # machine (600 ms once lost that race in CI while the first round waited for its session)
    rounds = 3
    replies = [{"text": f"round {i} " + "tok " * 40, "delayMs": 4000} for i in range(rounds)]
    home, port = chat_home(tmp_path, replies)
    with HostProcess(home):
        first = open_app(browser, home, port)
        message = first.get_by_role("textbox", name="Message")
        second = open_app(browser, home, port)
        session = None
        for n in range(rounds):
            message.fill(f"go {n}")
            message.press("Enter")
            session = session or session_of(first)
            expect(first.locator("#log .msg.assistant[data-streaming]")).to_be_visible()   # mid-turn
            second.goto(f"http://127.0.0.1:{port}/#/sessions")    # the other tab (re)opens the session now
            second.goto(f"http://127.0.0.1:{port}/#/sessions/{session}")
            expect(second.locator("#log .msg.assistant[data-streaming]")).to_be_visible()  # joined mid-turn
            for tab in (first, second):
                done = tab.locator("#log .msg.assistant:not([data-streaming])", has_text=f"round {n} ")
                expect(done).to_have_text((f"round {n} " + "tok " * 40).strip())
                expect(tab.locator("#chat-state")).to_have_text("idle")    # the turn's end arrived
                expect(tab.locator("#log .msg.user")).to_have_count(n + 1)
                expect(tab.locator("#log .msg.assistant")).to_have_count(n + 1)
        first.close()
        second.close()


def test_preset_is_checked_as_typed_against_the_hosts_presets(browser, tmp_path):
    home, port = chat_home(tmp_path, [{"text": "fine"}], [PRESETS_ROW])
    write(home / ".agent-presets" / "reviewer" / "agent.cordis.yml",
          "- id: reviewer-tools\n  name: \"@dshctl/tools\"\n  config:\n    allow: [read]\n")
    with HostProcess(home):
        page = open_app(browser, home, port)
        message = page.get_by_role("textbox", name="Message")
        message.press_sequentially("/preset bogus", delay=20)
        alert = page.get_by_role("alert")
        expect(alert).to_contain_text('agent-presets: preset "bogus" not found (available: ')
        expect(alert).to_contain_text("reviewer")                # the host's list, the user root included
        expect(message).to_have_attribute("aria-invalid", "true")
        message.press("Enter")
        expect(message).to_have_value("/preset bogus")           # not taken
        message.fill("/preset reviewer")
        expect(alert).to_have_count(0)
        message.press("Enter")
        expect(page.locator("#log .msg.note")).to_contain_text("preset reviewer from the next message")
        message.fill("hello")
        message.press("Enter")
        expect(page.locator("#chat-meta")).to_contain_text("preset reviewer")
        page.close()


def test_what_is_typed_while_a_message_is_on_its_way_is_kept(browser, tmp_path):
    home, port = chat_home(tmp_path, [{"text": "answer 1"}, {"text": "answer 2"}])
    with HostProcess(home):
        page = open_app(browser, home, port)
        message = page.get_by_role("textbox", name="Message")
        held = []                                           # the send, held in the browser until released
        page.route("**/api/chat/send", lambda route: held.append(route))
        message.fill("first")
        message.press("Enter")
        expect(message).to_have_value("")                   # taken at once, before the host answers
        while not held:
            page.wait_for_timeout(20)
        message.fill("/model other-model")                  # for the next message, typed meanwhile
        message.press("Enter")
        message.fill("a draft")
        held[0].continue_()
        page.unroute("**/api/chat/send")
        expect(page.locator("#log .msg.assistant", has_text="answer 1")).to_be_visible()
        expect(message).to_have_value("a draft")             # the host's answer did not wipe it
        message.fill("/model")
        message.press("Enter")
        expect(page.locator("#log .msg.note").last).to_have_text("model other-model from the next message")
        message.fill("second")
        with page.expect_request("**/api/chat/send") as sent:
            message.press("Enter")
        assert json.loads(sent.value.post_data)["model"] == "other-model"
        expect(page.locator("#log .msg.assistant", has_text="answer 2")).to_be_visible()
        page.close()
