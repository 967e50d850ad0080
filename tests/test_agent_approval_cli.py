"""Approvals as a user meets them on the command line: ``agent run`` with nobody to answer fails closed,
``--approval never`` refuses without asking, and ``agent chat`` in a real terminal shows the tool call
and takes "deny" — the tool does not run and the model is told."""
import json
import time

from dshctl.agents.session.store import SessionStore
from tests.agents.loop_rows import PROBE, agent_rows
from tests.host.helpers import WAIT_S, bundle_dir, make_home, write
from tests.pty_chat import PtyChat
from tests.test_agent_cmd import agent

CALL = [{"toolCalls": [{"name": "echo", "arguments": {"text": "RAN-THE-TOOL"}}]}, {"text": "Finished."}]


def approval_home(tmp_path, approval=None):
    rows = agent_rows(CALL, probe={})
    rows += f'    - {json.dumps({"id": "approval", "name": "@dshctl/approval", "config": approval or {"ask": ["echo"]}})}\n'
    rows += '    - {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"mode": "read-only"}}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    return home


def only_session(home):
    [summary] = SessionStore(home).list()
    log = SessionStore(home).open(summary["id"] if isinstance(summary, dict) else summary.id)
    try:
        return list(log.events)
    finally:
        log.close()


def results(events):
    return [e["data"]["message"]["content"][0]["content"][0]["text"] for e in events if e["type"] == "tool/result"]


def test_run_with_nobody_to_answer_fails_closed(tmp_path):
    home = approval_home(tmp_path)
    result = agent(home, "run", "echo it")
    assert result.returncode == 0, result.stderr
    events = only_session(home)
    assert results(events) == ['Error: tool "echo" requires approval, but no approval channel is available']
    assert "Allow the call echo" in result.stderr          # shown, with nobody there to answer it
    assert [e["data"]["outcome"] for e in events if e["type"] == "approval/decided"] == ["unavailable"]


def test_run_with_approval_never_refuses_without_a_prompt(tmp_path):
    home = approval_home(tmp_path)
    result = agent(home, "run", "echo it", "--approval", "never", "--permissions", "workspace-write")
    assert result.returncode == 0, result.stderr
    events = only_session(home)
    assert results(events) == ['Error: the user rejected tool "echo"']
    assert "Allow the call" not in result.stderr
    kinds = [(e["type"], e["data"]) for e in events if e["type"] in ("permission/preset", "sandbox/mode", "approval/policy")]
    assert kinds == [("permission/preset", {"preset": "workspace-write"}), ("sandbox/mode", {"mode": "workspace-write"}),
                     ("approval/policy", {"policy": "ask"}), ("approval/policy", {"policy": "never"})]


def test_run_with_an_unknown_preset_is_one_line(tmp_path):
    result = agent(approval_home(tmp_path), "run", "echo it", "--permissions", "everything")
    assert result.returncode == 1
    assert 'unknown preset "everything" (available: workspace-write, danger-full-access)' in result.stderr
    assert "Traceback" not in result.stderr
    policy = agent(approval_home(tmp_path / "again"), "run", "echo it", "--approval", "sometimes")
    assert policy.returncode == 1 and 'approval policy must be one of "ask" or "never"' in policy.stderr
    assert "Traceback" not in policy.stderr


def test_chat_in_a_real_terminal_denies_the_call(tmp_path):
    home = approval_home(tmp_path)
    with PtyChat(home) as chat:
        chat.read_until(b"you> ")
        chat.type(b"echo it\n")
        chat.read_until(b'Allow the call echo({"text": "RAN-THE-TOOL"})?')
        chat.read_until(b"2. deny")
        chat.read_until(b"answer")
        chat.type(b"2\n")
        chat.read_until(b"Finished.")
        chat.read_until(b"you> ")
        chat.type(b"/quit\n")
        assert chat.exit_code() == 0
    events = only_session(home)
    assert results(events) == ['Error: the user rejected tool "echo"']
    assert [e["data"]["outcome"] for e in events if e["type"] == "approval/decided"] == ["rejected"]


def test_a_control_socket_client_answers_an_approval(tmp_path):
    """The running host's socket relays the question; the client (the browser UI's seat) allows once."""
    import socket
    from dshctl.host import state_dir
    from dshctl.host.control import _addressable
    from tests.host.helpers import HostProcess
    home = approval_home(tmp_path)
    with HostProcess(home):                          # ready: it has answered host/ready
        path = state_dir.socket_path(home, "p")
        deadline = time.monotonic() + WAIT_S
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with _addressable(path) as address:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(address)
        client.settimeout(WAIT_S)
        stream = client.makefile("rwb")
        stream.write(json.dumps({"op": "agent.run", "prompt": "echo it"}).encode() + b"\n")
        stream.flush()
        asked = None
        while True:
            line = json.loads(stream.readline())
            if "ask" in line:
                asked = line["ask"]
                stream.write(json.dumps({"answer": {"option": "allow once"}}).encode() + b"\n")
                stream.flush()
            if line.get("done"):
                break
        client.close()
    assert asked["approval"]["toolName"] == "echo" and asked["approval"]["arguments"] == {"text": "RAN-THE-TOOL"}
    events = only_session(home)
    assert results(events) == ["RAN-THE-TOOL"]
    assert [e["data"]["outcome"] for e in events if e["type"] == "approval/decided"] == ["allowed-once"]


def test_an_unknown_preset_opens_no_session(tmp_path):
    home = approval_home(tmp_path)
    result = agent(home, "run", "echo it", "--permissions", "everything")
    assert result.returncode == 1
    assert SessionStore(home).list() == []      # refused before a session was created
