"""Where dshctl's sessions land: the working directory in the header, ``sessions/--<cwd>--/session-<uuid>/``
as dsh lays them out, and the old form (bare uuid ids under ``_no-cwd``) still listed, shown and
resumed — by the real CLI on an embedded host, and by the host's ``agent.run`` op."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

from dshctl.agents.session.layout import project_key
from dshctl.agents.session.store import AmbiguousSessionId, SessionStore
from dshctl.host.agent_ops import TurnStream
from tests.agents.loop_rows import agent_home
from tests.agents.session_helpers import write_turn
from tests.host.helpers import DSHCTL, WAIT_S, InProcess, run_async

REPLIES = [{"text": "First answer."}, {"text": "Second answer."}, {"text": "Third answer."}]


def dshctl(home, *args, cwd):
    return subprocess.run([DSHCTL, "--home", str(home), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=WAIT_S)


def done_line(stdout: str) -> dict:
    return json.loads(stdout.splitlines()[-1])


def test_agent_run_records_its_directory_and_resumes_by_uuid_prefix(tmp_path):
    home = agent_home(tmp_path, REPLIES)
    workspace = tmp_path / "my project"
    elsewhere = tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    first = dshctl(home, "agent", "run", "--profile", "p", "--format", "json", "hello", cwd=workspace)
    assert first.returncode == 0, first.stderr
    session_id = done_line(first.stdout)["session"]
    assert session_id.startswith("session-") and uuid.UUID(session_id.removeprefix("session-"))
    store = SessionStore(home)
    info = next(i for i in store.list() if i.id == session_id)
    cwd = os.path.realpath(workspace)
    assert info.header["cwd"] == cwd
    assert info.path == home / "sessions" / project_key(cwd) / session_id / "session.jsonl.zstd"
    assert project_key(cwd).endswith("-my~0020project--")
    # resumed from another directory, by the uuid's first characters: the session keeps its cwd
    again = dshctl(home, "agent", "run", "--profile", "p", "--format", "json",
                   "--session", session_id.removeprefix("session-")[:8], "again", cwd=elsewhere)
    assert again.returncode == 0, again.stderr
    assert done_line(again.stdout)["session"] == session_id
    [only] = SessionStore(home).list()
    assert only.path == info.path
    turns = [e["data"]["turn"] for e in store.read(session_id).events if e["type"] == "turn/start"]
    assert turns == [1, 2]


def test_an_old_form_session_is_listed_shown_and_resumed(tmp_path):
    home = agent_home(tmp_path, REPLIES)
    old_id = str(uuid.uuid4())
    log = SessionStore(home).create(session_id=old_id)          # as dshctl wrote them before issue 23
    write_turn(log, 1, "from before", tool=False)
    log.close()
    assert log.path.parent.parent.name == "_no-cwd"
    listed = dshctl(home, "session", "list", "--format", "json", cwd=tmp_path)
    assert [i["id"] for i in json.loads(listed.stdout)] == [old_id] and "cwd" not in json.loads(listed.stdout)[0]
    shown = dshctl(home, "session", "show", old_id[:6], "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["header"]["id"] == old_id
    resumed = dshctl(home, "agent", "run", "--profile", "p", "--format", "json", "--session", old_id[:6],
                     "still there?", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert done_line(resumed.stdout)["session"] == old_id
    events = SessionStore(home).read(old_id).events
    assert [e["data"]["turn"] for e in events if e["type"] == "turn/start"] == [1, 2]
    assert SessionStore(home).find(old_id) == log.path                 # not moved: dsh checks the place


def test_an_ambiguous_prefix_is_one_line_with_a_hint(tmp_path):
    home = tmp_path / "home"
    store = SessionStore(home)
    for suffix in ("1", "2"):
        store.create(cwd="/w", session_id=f"session-abc{suffix}").close()
    try:
        store.resolve("abc")
        raise AssertionError("an ambiguous prefix must not resolve")
    except AmbiguousSessionId as exc:
        assert "session-abc1, session-abc2" in str(exc)
    assert store.resolve("abc2") == store.resolve("session-abc2") == "session-abc2"
    shown = dshctl(home, "session", "show", "abc", cwd=tmp_path)
    assert shown.returncode == 1
    assert shown.stderr.splitlines() == [
        "dshctl: error: session id prefix 'abc' is ambiguous (session-abc1, session-abc2)",
        "  hint: give more characters of the id"]


@run_async()
async def test_the_hosts_own_sessions_record_its_directory_and_a_bad_cwd_is_refused(tmp_path):
    home = agent_home(tmp_path, REPLIES)
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open()
        assert agent.session.header["cwd"] == os.getcwd()
        assert agent.session.path.parent.parent.name == project_key(os.getcwd())
        lines = [line async for line in TurnStream(host, {"prompt": "hi", "cwd": "relative/dir"})]
        assert lines == [{"ok": False, "error": "a session's cwd must be an absolute path, got 'relative/dir'",
                          "hint": "send \"cwd\" as an absolute path, or leave it out for the host's working "
                                  "directory"}]
        stream = TurnStream(host, {"prompt": "hi", "cwd": str(tmp_path)})
        done = [line async for line in stream][-1]
        assert done["done"] and SessionStore(home).read(done["session"]).header["cwd"] == str(tmp_path)


def test_agent_chat_records_its_directory_too(tmp_path):
    home = agent_home(tmp_path, REPLIES)
    workspace = tmp_path / "chat here"
    workspace.mkdir()
    chat = subprocess.run([DSHCTL, "--home", str(home), "agent", "chat", "--profile", "p"], cwd=workspace,
                          input="hello\n/quit\n", capture_output=True, text=True, timeout=WAIT_S)
    assert chat.returncode == 0, chat.stderr
    assert "First answer." in chat.stdout
    [info] = SessionStore(home).list()
    assert info.id.startswith("session-") and info.header["cwd"] == os.path.realpath(workspace)
    assert info.path.parent.parent.name == project_key(os.path.realpath(workspace))
