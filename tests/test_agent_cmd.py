"""``dshctl agent run`` and ``dshctl agent chat`` as a user runs them: real processes, an embedded host
or a running one (over its control socket), the scripted model, a real workspace."""
import json
import signal
import subprocess
import time

from dshctl.agents.session.store import SessionStore
from tests.agents.loop_rows import agent_home, without_chunks
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, write
from tests.pty_chat import PtyChat
from demo_home import copy_demo_home

READ = [{"text": "Let me look.", "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"text": "The notes say alpha."}]


def home_with_notes(tmp_path, replies=READ, **kw):
    work = tmp_path / "work"
    write(work / "notes.txt", "alpha\n")
    return agent_home(tmp_path, replies, fs_root=str(work), **kw)


def agent(home, *args, input=None, timeout=WAIT_S):
    return subprocess.run([DSHCTL, "--home", str(home), "agent", *args, "--profile", "p"], input=input,
                          capture_output=True, text=True, timeout=timeout)


def events_of(stdout: str) -> tuple[list[dict], dict]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    return lines[:-1], lines[-1]


def test_run_on_an_embedded_host_streams_the_answer_and_the_tool_call(tmp_path):
    home = home_with_notes(tmp_path)
    result = agent(home, "run", "what do the notes say?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Let me look.\nThe notes say alpha.\n"
    assert '→ read_file {"path":"notes.txt"}' in result.stderr and "← alpha" in result.stderr
    session = result.stderr.strip().splitlines()[-1].removeprefix("(session ").rstrip(")")
    stored = SessionStore(home).read(session)
    assert without_chunks(stored.events)[-1] == "turn/end" and stored.closers == []


def test_run_json_prints_the_turns_events_and_continues_a_session(tmp_path):
    home = home_with_notes(tmp_path, READ + [{"text": "Still alpha."}])
    with HostProcess(home) as host:
        first = agent(home, "run", "--format", "json", "notes?")
        assert first.returncode == 0, first.stderr
        events, done = events_of(first.stdout)
        assert without_chunks(events) == [
            "turn/start", "step/start", "user/message", "request/header", "assistant/message", "tool/call",
            "tool/result", "step/end", "step/start", "assistant/message", "step/end", "turn/end"]
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert done == {"done": True, "session": done["session"], "reason": {"kind": "completed"}}
        again = agent(home, "run", "--session", done["session"], "--format", "json", "and now?")
        more, done2 = events_of(again.stdout)
        assert done2["session"] == done["session"] and more[0]["seq"] == len(events)
        assert more[0]["data"] == {"turn": 2}
        host.stop()
    stored = SessionStore(home).read(done["session"])
    assert [e["data"]["turn"] for e in stored.events if e["type"] == "turn/end"] == [1, 2]


def test_run_errors_are_one_line_with_a_hint(tmp_path):
    home = home_with_notes(tmp_path)
    result = agent(home, "run", "--session", "no-such-session", "hi")
    assert result.returncode == 1
    # the session is resolved (id, unique prefix, --continue) before any host is reached
    assert result.stderr.startswith("dshctl: error: no session 'no-such-session'")
    assert "hint: `dshctl session list` shows the sessions" in result.stderr
    assert "Traceback" not in result.stderr
    result = agent(home, "run", "--preset", "nope", "hi")
    assert result.returncode == 1 and "Traceback" not in result.stderr


def test_ctrl_c_aborts_the_turn_on_the_running_host(tmp_path):
    home = agent_home(tmp_path, [{"text": "word " * 200, "delayMs": 20000}])
    with HostProcess(home):
        proc = subprocess.Popen([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                                 "talk"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if '"text-delta"' in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 130, err
        done = json.loads(out.splitlines()[-1])
        assert done["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}


def test_chat_runs_turns_and_commands_from_stdin(tmp_path):
    replies = [{"text": "Hi there."},
               {"toolCalls": [{"name": "ask_user_question", "arguments": {
                   "question": "Which one?", "options": [{"label": "red"}, {"label": "blue", "recommended": True}]}}]},
               {"text": "Blue it is."}]
    home = agent_home(tmp_path, replies)
    script = "hello\n/session\npick a colour\n2\n/new\n/session\n/bogus\n/quit\n"
    result = agent(home, "chat", input=script)
    assert result.returncode == 0, result.stderr
    assert "Hi there." in result.stdout and "Blue it is." in result.stdout
    assert "? Which one?" in result.stderr and "2. blue (recommended)" in result.stderr
    assert "← The user chose: blue" in result.stderr
    assert "the next message starts a new session" in result.stdout
    assert "(no session yet" in result.stdout and "unknown command '/bogus'" in result.stdout
    sessions = SessionStore(home).list()
    assert len(sessions) == 1


def test_chat_ctrl_c_in_a_real_terminal_aborts_only_the_turn(tmp_path):
    home = agent_home(tmp_path, [{"text": "word " * 200, "delayMs": 20000}, {"text": "second answer"}])
    with PtyChat(home) as chat:
        chat.read_until(b"you> ")
        chat.type(b"talk\n")
        chat.read_until(b"word")
        chat.type(b"\x03")                     # Ctrl-C, as the terminal sends it
        chat.read_until(b"turn aborted")
        chat.type(b"again\n")
        chat.read_until(b"second answer")
        chat.type(b"/quit\n")
        assert chat.exit_code() == 0


def test_the_demo_home_answers_with_one_tool_call(tmp_path):
    import shutil

    from tests.host.helpers import REPO
    home = tmp_path / "home"
    copy_demo_home(home)
    port0 = write(tmp_path / "port0.yml", "- id: http\n  config: {host: 127.0.0.1, port: 0}\n")
    with HostProcess(home, "web", "--patch", str(port0)):
        result = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "web", "--format",
                                 "json", "What do the workspace notes say?"], capture_output=True, text=True,
                                timeout=WAIT_S)
    assert result.returncode == 0, result.stderr
    events, done = events_of(result.stdout)
    calls = [e["data"] for e in events if e["type"] == "tool/call"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("read", {"file_path": "notes.md"})]
    [tool_result] = [e for e in events if e["type"] == "tool/result"]
    text = tool_result["data"]["message"]["content"][0]["content"][0]["text"]
    notes = home / "profiles/web/node_modules/@demo/assistant/workspace/notes.md"
    assert text.startswith(f"<path>{notes.resolve()}</path>\n<type>file</type>\n<content>\n1: # Demo notes")
    [header] = [e["data"]["header"] for e in events if e["type"] == "request/header"]
    offered = {tool["name"] for tool in header["tools"]}
    assert {"read", "read_image", "glob", "grep"} <= offered and not offered & {"write", "edit", "read_file"}
    assert done["reason"] == {"kind": "completed"}


def test_a_row_that_fails_on_the_embedded_host_is_one_line_not_a_traceback(tmp_path):
    import shutil

    from tests.host.helpers import REPO
    home = tmp_path / "home"
    copy_demo_home(home)
    script = home / "profiles/web/node_modules/@demo/assistant/script.yml"
    script.write_text("- text: 3\n")
    result = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "web", "hi"],
                            capture_output=True, text=True, timeout=WAIT_S)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"row llm (@dshctl/llm-script) failed to start: ScriptError: {script}:1:3" in result.stderr
    assert result.stderr.count("dshctl: error:") == 1 and "  hint: " in result.stderr
