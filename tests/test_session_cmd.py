"""`dshctl session list|show|export` end to end, on logs written in dsh's format."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.agents.session.api import SessionStore

from tests.agents.session_helpers import write_turn
from tests.host.helpers import DSHCTL, WAIT_S

DSHCTL = Path(sys.executable).parent / "dshctl"


from test_cli_conventions import run_main as run  # noqa: E402 - one CLI runner for the suite


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    h = tmp_path / "home"
    store = SessionStore(h)
    first = store.create(cwd="/work/app", session_id="1111aaaa-0000-4000-8000-000000000001", created_at=1_000)
    write_turn(first, 1, "read the file please")
    write_turn(first, 2, "and now?", tool=False)
    first.close()
    second = store.create(cwd="/work/app", session_id="2222bbbb-0000-4000-8000-000000000002",
                          agent_preset="coder", created_at=2_000)
    write_turn(second, 1, "left open", end=False)
    second.close()
    return h


def test_list_newest_first(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "session", "list", "--format", "json")
    assert code == 0, err
    items = json.loads(out)
    assert [i["id"][:4] for i in items] == ["2222", "1111"]
    assert items[0]["agentPreset"] == "coder" and items[0]["cwd"] == "/work/app"
    assert items[0]["compression"] == "zstd" and items[0]["createdAt"] == 2000
    code, out, _ = run(capsys, "session", "list", "--home", str(home))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["ID", "CREATED", "CWD"]
    assert lines[1].startswith("2222bbbb") and "coder" in lines[1] and "1970-01-01 00:00:02Z" in lines[1]


def test_show_text_and_json(capsys, home):
    code, out, err = run(capsys, "--home", str(home), "session", "show", "1111")      # a unique prefix
    assert code == 0, err
    assert "session  1111aaaa-0000-4000-8000-000000000001" in out
    assert "turn 1  (1 step(s), completed, 10 in / 4 out tokens)" in out
    assert "  user: read the file please" in out
    assert '  tool: read_file {"path": "a"} -> ok' in out
    assert "  assistant: w0 w1 w2 w3" in out
    code, out, _ = run(capsys, "--home", str(home), "session", "show", "2222bbbb-0000-4000-8000-000000000002",
                       "--format", "json")
    doc = json.loads(out)
    assert doc["header"]["agentPreset"] == "coder"
    assert doc["repair"] == ["turn/end"]                 # its step was closed; the turn was not
    assert doc["turns"][0]["end"] is None and doc["turns"][0]["prompt"] == "left open"
    assert [m["id"] for m in doc["history"]] == ["u1", "a1", "r1"]
    assert doc["requestHeader"]["config"] == {"provider": "script", "model": "demo"}


def test_export_jsonl_is_the_stored_log_and_json_expands_it(capsys, home, tmp_path):
    code, out, err = run(capsys, "--home", str(home), "session", "export", "1111")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 0
    assert any(row["type"] == "text-chunks" for row in lines)          # packed rows, as dsh writes them
    target = tmp_path / "out.json"
    code, _, err = run(capsys, "--home", str(home), "session", "export", "1111", "--format", "json", "-o", str(target))
    assert code == 0 and "wrote" in err
    doc = json.loads(target.read_text())
    assert [e["seq"] for e in doc["events"]] == list(range(len(doc["events"])))
    assert doc["events"] == SessionStore(home).read(doc["header"]["id"]).events


def test_reading_never_writes(capsys, home):
    path = SessionStore(home).find("2222bbbb-0000-4000-8000-000000000002")
    before = path.read_bytes()
    for verb in ("show", "export"):
        assert run(capsys, "--home", str(home), "session", verb, "2222")[0] == 0
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(b""), "empty or header-less"),
    (lambda p: p.write_bytes(b"\x28\xb5\x2f\xfd garbage"), "cannot read session log"),
    (lambda p: p.write_bytes(p.read_bytes()[:30] + b"\xff" * 8 + p.read_bytes()[38:]), "cannot read session log"),
])
def test_a_bad_session_file_is_one_clear_line(capsys, home, damage, message):
    path = SessionStore(home).find("1111aaaa-0000-4000-8000-000000000001")
    damage(path)
    for verb in ("show", "export"):
        code, out, err = run(capsys, "--home", str(home), "session", verb, "1111aaaa-0000-4000-8000-000000000001")
        assert code == 1 and out == ""
        assert err.startswith(f"dshctl: error: {path}: ") and message in err
        assert len(err.splitlines()) == 2 and err.splitlines()[1].startswith("  hint: ")
    code, out, err = run(capsys, "--home", str(home), "session", "list", "--format", "json")
    assert code == 0
    assert [i.get("error") is not None for i in json.loads(out)] == [False, True]


def test_unknown_and_ambiguous_ids(capsys, home):
    code, _, err = run(capsys, "--home", str(home), "session", "show", "nope")
    assert code == 1 and "no session 'nope' under" in err and "session list" in err
    code, _, err = run(capsys, "--home", str(home), "session", "show", "")
    assert code == 1 and err.startswith("dshctl: error: ")
    store = SessionStore(home)
    store.create(session_id="1111aaaa-ffff").close()
    code, _, err = run(capsys, "--home", str(home), "session", "show", "1111")
    assert code == 1 and "ambiguous" in err


def test_the_real_binary_on_a_raw_jsonl_home(tmp_path):
    home = tmp_path / "raw"
    log = SessionStore(home, compression="none").create(session_id="raw-1")
    write_turn(log, 1, "plain text log")
    log.close()
    proc = subprocess.run([str(DSHCTL), "--home", str(home), "session", "show", "raw-1", "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["turns"][0]["prompt"] == "plain text log"


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from dshctl.agents.session.layout import log_path  # noqa: E402
from dshctl.agents.session.validate import KNOWN_EVENT_TYPES  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["turn", "step", "message", "reason", "kind", "id", "content", "role",
                                          "source", "callId", "chunk", "type", "usage", "header", "config"]),
                         inner, max_size=4), max_leaves=12)
_event = st.fixed_dictionaries({"type": st.sampled_from(sorted(KNOWN_EVENT_TYPES) + ["x/y"]), "data": _json},
                               optional={"surfaceOp": st.sampled_from(["append", {"op": "replace"}]),
                                         "ignorable": st.just(True)})
_header = st.fixed_dictionaries({"type": st.just("session"), "version": st.sampled_from([0, 0, 1]),
                                 "id": st.just("fz"), "createdAt": st.integers(0, 5),
                                 "delegationDepth": st.integers(0, 1)},
                                optional={"cwd": st.sampled_from(["/w", 3, ""]), "agentPreset": _json})


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None)
@given(header=_header, events=st.lists(_event, max_size=8), tail=st.binary(max_size=6))
def test_no_session_file_makes_an_internal_error(capsys, tmp_path_factory, header, events, tail):
    home = tmp_path_factory.mktemp("fuzz")
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) and header.get("cwd") else None
    path = log_path(home / "sessions", cwd, "fz", "none")
    path.parent.mkdir(parents=True)
    lines = [json.dumps(header)] + [json.dumps({**e, "seq": i, "time": 5}) for i, e in enumerate(events)]
    path.write_bytes(("\n".join(lines) + "\n").encode() + tail)
    for args in (["session", "show", "fz"], ["session", "show", "fz", "--format", "json"],
                 ["session", "export", "fz"]):
        code, out, err = run(capsys, "--home", str(home), *args)
        assert code in (0, 1), err
        assert "internal error" not in err
        if code == 1:
            assert err.startswith("dshctl: error: ") and len(err.splitlines()) <= 2


def test_archive_and_undo_write_the_profile_workspace_file(capsys, home):
    (home / "profiles" / "web").mkdir(parents=True)
    workspace = home / "profiles" / "web" / ".dshctl" / "workspace.json"
    code, out, err = run(capsys, "--home", str(home), "session", "archive", "1111")
    assert code == 0, err
    assert out == "session 1111aaaa-0000-4000-8000-000000000001 archived\n"
    assert json.loads(workspace.read_text()) == {"archivedSessionIds": ["1111aaaa-0000-4000-8000-000000000001"]}
    code, out, _ = run(capsys, "--home", str(home), "session", "archive", "1111", "--format", "json")
    assert code == 0 and json.loads(out)["changed"] is False
    code, out, _ = run(capsys, "--home", str(home), "session", "archive", "--undo", "1111")
    assert code == 0 and "restored from the archive" in out
    assert json.loads(workspace.read_text()) == {"archivedSessionIds": []}


def test_archive_refuses_an_unknown_session_or_profile_and_writes_nothing(capsys, home):
    code, _, err = run(capsys, "--home", str(home), "session", "archive", "1111")
    assert code == 1 and "no profile 'web'" in err and "profile list` shows the profiles" in err
    (home / "profiles" / "web").mkdir(parents=True)
    code, _, err = run(capsys, "--home", str(home), "session", "archive", "9999")
    assert code == 1 and "no session '9999'" in err
    assert not (home / "profiles" / "web" / ".dshctl").exists()


def test_show_separates_the_steps_texts_each_before_its_calls(tmp_path):
    from tests.agents.test_tools_dsh_host import home_with
    home = home_with(tmp_path, [{"text": "Let me look.", "toolCalls": [{"name": "todo_write", "arguments": {
        "todos": [{"content": "look", "status": "in_progress"}]}}]}, {"text": "All done."}])
    run = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "go"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=WAIT_S)
    session = run.stderr.strip().splitlines()[-1].removeprefix("(session ").rstrip(")")
    shown = subprocess.run([DSHCTL, "--home", str(home), "session", "show", session[:8]], capture_output=True,
                           text=True, timeout=WAIT_S)
    lines = [l.strip() for l in shown.stdout.splitlines() if l.startswith("  ")]
    assert lines[1:] == ["assistant: Let me look.",
                         'tool: todo_write {"todos":[{"content":"look","status":"in_progress"}]} -> Updated '
                         "todo list: 0 pending, 1 in progress, 0 completed.", "assistant: All done."]
