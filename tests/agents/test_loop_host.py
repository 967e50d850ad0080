"""The loop in real host processes: restore after kill -9 mid-turn, a hot swap of the llm row in the
middle of a session, presets as agent scopes."""
import json
import signal
import subprocess
import time

from dshctl.agents.session import reader
from dshctl.agents.session.store import SessionStore
from tests.agents.loop_rows import agent_home, agent_rows, without_chunks
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, InProcess, run_async, user_file, write


def run_json(home, *args):
    result = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                             *args], capture_output=True, text=True, timeout=WAIT_S)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return lines[:-1], lines[-1]


def text_of(events):
    return "".join(b["text"] for e in events if e["type"] == "assistant/message"
                   for b in e["data"]["message"]["content"] if b["type"] == "text")


def test_restore_after_kill_9_mid_turn(tmp_path):
    home = agent_home(tmp_path, [{"text": "slow " * 100, "delayMs": 30000}, {"text": "back again"}])
    host = HostProcess(home)
    with host:
        proc = subprocess.Popen([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format",
                                 "json", "start"], stdout=subprocess.PIPE, text=True)
        session = None
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            event = json.loads(proc.stdout.readline())
            if event["type"] == "assistant/chunk" and event["data"]["chunk"]["type"] == "text-delta":
                break
        host.proc.send_signal(signal.SIGKILL)
        host.proc.wait(WAIT_S)
        proc.wait(WAIT_S)
    [info] = SessionStore(home).list()
    session = info.id
    scan = reader.scan_file(info.path)
    assert scan.truncate_to is None                       # never torn: the last event is whole
    stored = SessionStore(home).read(session)
    assert without_chunks(stored.events) == ["turn/start", "step/start", "user/message"]
    assert [c["type"] for c in stored.closers][-2:] == ["step/end", "turn/end"]
    write(user_file(home), "- id: llm\n  config:\n    replies:\n      - text: back again\n")
    with HostProcess(home):                               # a new host restores the session and goes on
        events, done = run_json(home, "--session", session, "go on")
        assert done["reason"] == {"kind": "completed"} and done["session"] == session
        assert text_of(events) == "back again"
    restored = SessionStore(home).read(session)
    ends = [e["data"] for e in restored.events if e["type"] == "turn/end"]
    assert ends == [{"turn": 1, "reason": {"kind": "interrupted"}}, {"turn": 2, "reason": {"kind": "completed"}}]


def test_hot_swap_of_the_llm_row_mid_session(tmp_path):
    home = agent_home(tmp_path, [{"text": "from model A"}])
    with HostProcess(home) as host:
        first, done = run_json(home, "hello")
        assert text_of(first) == "from model A"
        write(user_file(home), "- id: llm\n  config:\n    model: model-b\n    replies:\n      - text: from model B\n")
        host.wait_for("reload/applied")
        second, done2 = run_json(home, "--session", done["session"], "and you?")
        assert text_of(second) == "from model B"
        header = [e for e in second if e["type"] == "request/header"]
        # the swap restored the agent from its log: a new loop instance logs its first header as "resume"
        assert header and header[0]["data"]["reason"] == "resume"
        assert header[0]["data"]["header"]["config"]["model"] == "model-b"
        assert host.status()["host"] is not None
    stored = SessionStore(home).read(done["session"])
    users = [e["data"]["content"][0]["text"] for e in stored.events if e["type"] == "user/message"]
    assert users == ["hello", "and you?"]                 # the session survived the swap


PRESET = """\
- id: tools
  name: "@dshctl/tools"
  config:
    allow: [read_file, list_dir]
"""


@run_async()
async def test_presets_are_agent_scopes_and_restore_picks_the_newest(tmp_path):
    work = tmp_path / "work"
    write(work / "a.txt", "a\n")
    rows = agent_rows([], fs_root=str(work)) + \
        '    - {"id": "agent-presets", "name": "@dshctl/agent-presets", "config": {"default": "standard"}}\n'
    from tests.host.helpers import make_home
    home = make_home(tmp_path, rows)
    write(home / ".agent-presets" / "reader" / "agent.cordis.yml", PRESET)
    async with InProcess(home) as host:
        agents, presets = host.root.get("agents"), host.root.get("agentPresets")
        reader_agent = await agents.open(preset="reader")
        plain = await agents.open()
        assert set(reader_agent.tool_view()) == {"read_file", "list_dir"}
        assert {"write_file", "search", "ask_user_question"} <= set(plain.tool_view())
        other = await agents.open(preset="reader")
        assert presets.standing["reader"] is not None and len([s for s in presets.sessions.values()
                                                               if s == "reader"]) == 2
        selected = [e["data"] for e in reader_agent.session.events if e["type"] == "agent-preset/selected"]
        assert selected == [{"agentPreset": "reader"}]
        await agents.open(reader_agent.id, preset="standard")     # switch: a second, newer selection
        assert reader_agent.preset == "standard" and "write_file" in reader_agent.tool_view()
        session_id = reader_agent.id
        await agents.close(session_id)
        await agents.close(other.id)
        restored = await agents.open(session_id)                  # restore: the newest selection wins
        assert restored.preset == "standard"
        assert "write_file" in restored.tool_view()


def agent_cli(home, *args):
    return subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                           *args], capture_output=True, text=True, timeout=WAIT_S)


def lines(result):
    out = [json.loads(line) for line in result.stdout.splitlines()]
    return out[:-1], out[-1]


def test_turn_stories_on_a_host_process(tmp_path):
    """Parallel vs exclusive timings, max-tokens stickiness, a pre-step rejection and a turn-stopping
    stop, each seen through `agent run` against one running host."""
    par = [{"name": "sleep_par", "arguments": {"tag": t, "ms": 400}} for t in ("a", "b")]
    replies = [{"toolCalls": par + [{"name": "sleep_ex", "arguments": {"tag": "x", "ms": 50}}]},
               {"text": "slept"},
               {"text": "cut", "finish": "length"}, {"text": "whole"}]
    home = agent_home(tmp_path, replies, probe={"reject": "forbidden", "steerOnce": "go on"})
    with HostProcess(home):
        events, done = lines(agent_cli(home, "sleep"))
        spans = {}
        for e in events:
            if e["type"] == "tool/result":
                tag = e["data"]["message"]["content"][0]["content"][0]["text"].split()[1]
                spans[tag] = (e["data"]["meta"]["start"], e["data"]["meta"]["end"])
        assert spans["a"][0] < spans["b"][1] and spans["b"][0] < spans["a"][1]      # overlap
        assert spans["x"][0] >= max(spans["a"][1], spans["b"][1])                    # barrier
        events, done = lines(agent_cli(home, "--session", done["session"], "long"))
        assert done["reason"] == {"kind": "max-tokens"}                              # sticky
        assert sum(1 for e in events if e["type"] == "step/start") == 2              # the steer ran a step
        rejected = agent_cli(home, "--session", done["session"], "something forbidden")
        assert rejected.returncode == 4
        events, done = lines(rejected)
        assert [e["type"] for e in events] == ["turn/start", "turn/end"]
        assert done["reason"] == {"kind": "blocked"}


def test_a_plugin_stops_a_turn_on_a_host_process(tmp_path):
    loop_call = {"toolCalls": [{"name": "sleep_par", "arguments": {"tag": "t", "ms": 1}}]}
    home = agent_home(tmp_path, [loop_call] * 5, probe={"stopAfterStep": 2})
    with HostProcess(home):
        result = agent_cli(home, "loop")
        assert result.returncode == 4
        events, done = lines(result)
        assert done["reason"] == {"kind": "aborted", "reason": {"kind": "hook", "reason": "probe stops at step 2"}}
        assert sum(1 for e in events if e["type"] == "step/start") == 2
