"""Session logs both ways against the real dsh 0.1.1-rc.2.

dsh's own session store and JSONL persistence (run from its source by ``sessions_driver.mts``) list,
locate, inspect, load and fold every session dshctl writes — one of every event family dshctl's code
appends (``session_zoo.py``) — and derive the same history and state as dshctl does. The other way,
real dsh runs a headless turn against a streaming server on 127.0.0.1 and dshctl reads that log (with
dsh's log-only events: permissions, sandbox, approval, inbox, title, request context), under the
strict resume rules, from the library and from the CLI; a session dshctl then resumes is still dsh's.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from dshctl.agents.session import checkpoint, folds
from dshctl.agents.session.history import derive_history, latest_request_header
from dshctl.agents.session.layout import encode_segment, project_key
from dshctl.agents.session.restore import restore
from dshctl.agents.session.store import SessionStore, validate_stored
from tests.agents.session_helpers import write_turn
from tests.agents.sse_server import Sse, SseServer, chunk
from tests.dsh.session_zoo import build_zoo, written_families
from tests.host.helpers import DSHCTL

DRIVER = Path(__file__).with_name("sessions_driver.mts")
DSH_ONLY = {"permission/preset", "sandbox/mode", "approval/policy", "agent/inbox/spliced", "session/title",
            "request/context"}
TITLE_PROMPT = "Create a concise title"


def dsh_reads(real_dsh, root: Path, compression: str = "zstd") -> dict:
    done = real_dsh.node_script(DRIVER, "read", str(root), compression)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def dshctl_reads(store: SessionStore, session_id: str) -> dict:
    """dshctl's reading of one session, in the driver's terms."""
    seen = store.read(session_id)
    validate_stored(seen.events, strict=True)            # the rules a resume applies
    events = seen.events + seen.closers
    inbox = folds.pending_inbox(events, seen.header.get("seedLength", 0))
    return {"meta": seen.header, "location": {"kind": "jsonl", "path": str(seen.path)},
            "types": [e["type"] for e in events], "seqs": [e["seq"] for e in events],
            "history": derive_history(events), "requestHeader": latest_request_header(events),
            "requestContext": folds.request_context(events), "title": folds.title(events),
            "knobs": folds.knobs(events),
            "inbox": {"nextTurn": [m["id"] for m in inbox["next-turn"]],
                      "nextStep": [m["id"] for m in inbox["next-step"]]}}


def same_reading(dsh_report: dict, ours: dict) -> None:
    assert "error" not in dsh_report, dsh_report.get("error")
    for key, value in ours.items():
        assert dsh_report[key] == value, key
    assert dsh_report["loadedEvents"] == len(ours["types"])
    assert dsh_report["raw"]["filename"] == "session.jsonl"


# --- dsh reads what dshctl wrote ------------------------------------------------------------------

@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    return build_zoo(tmp_path_factory.mktemp("zoo"))


@pytest.fixture(scope="module")
def zoo_by_dsh(real_dsh, zoo):
    return dsh_reads(real_dsh, zoo.root)


def test_the_zoo_holds_every_event_family_dshctl_writes(zoo):
    store = SessionStore(zoo.home)
    seen = {e["type"] for info in store.list() for e in store.read(info.id).events}
    assert written_families() <= seen
    assert {"tool/code-dispatch", "compaction/prune", "session/end-seed"} <= written_families()
    assert any(e.get("ignorable") for e in store.read(zoo.main).events)


def test_the_sessions_dsh_reads_carry_the_restore_checkpoint_the_host_left(zoo):
    """dsh's reading below covers the ``.restore`` sidecar: the host wrote one when it closed the agent."""
    store = SessionStore(zoo.home)
    path = store.find(zoo.main)
    assert (path.parent / checkpoint.FILE_NAME).is_file()
    assert restore(path, strict=True, save=False).from_checkpoint > 0


def test_dsh_lists_every_dshctl_session_with_its_header_and_place(zoo, zoo_by_dsh):
    store = SessionStore(zoo.home)
    ours = {info.id: info for info in store.list()}
    assert {h["id"]: h for h in zoo_by_dsh["listed"]} == {i: info.header for i, info in ours.items()}
    assert set(ours) == {zoo.main, zoo.crashed, zoo.legacy, zoo.empty, zoo.permissions}
    main = ours[zoo.main]
    assert main.id.startswith("session-") and main.header["cwd"] == str(zoo.workspace)
    assert main.path.parent.parent.name == project_key(str(zoo.workspace))
    assert main.path.parent.name == main.id and main.path.name == "session.jsonl.zstd"
    assert ours[zoo.legacy].path.parent.parent.name == "_no-cwd" and "cwd" not in ours[zoo.legacy].header
    for session_id, info in ours.items():
        assert zoo_by_dsh["sessions"][session_id]["location"]["path"] == str(info.path)


@pytest.mark.parametrize("which", ["main", "crashed", "legacy", "empty", "permissions"])
def test_dsh_derives_what_dshctl_derives_from_dshctl_logs(zoo, zoo_by_dsh, which):
    session_id = getattr(zoo, which)
    same_reading(zoo_by_dsh["sessions"][session_id], dshctl_reads(SessionStore(zoo.home), session_id))


def test_dsh_sees_the_resume_and_the_repair_dshctl_logged(zoo, zoo_by_dsh):
    main = zoo_by_dsh["sessions"][zoo.main]
    assert main["types"].count("session/end-seed") == 1 and main["types"].count("turn/start") == 4
    reasons = [e["data"]["reason"] for e in SessionStore(zoo.home).read(zoo.main).events
               if e["type"] == "request/header"]
    assert reasons[0] == "initial" and reasons[-1] == "resume"
    crashed = zoo_by_dsh["sessions"][zoo.crashed]["types"]
    assert crashed[-4:] == ["tool/result", "step/end", "turn/end", "session/end-seed"]


def test_dsh_reads_a_raw_jsonl_root_dshctl_wrote(real_dsh, tmp_path):
    store = SessionStore(tmp_path, compression="none", pack_chunks=False)
    log = store.create(cwd=str(tmp_path / "w"))
    write_turn(log, 1, "plain lines", deltas=5)
    log.close()
    report = dsh_reads(real_dsh, store.root, "none")
    same_reading(report["sessions"][log.id], dshctl_reads(store, log.id))


def test_dshctl_names_directories_as_dsh_does(real_dsh, tmp_path):
    rng = random.Random(23)
    alphabet = "aZ09._-~/\\: é😀\u0000\t" + "\ud800\udc00"

    def word(n):
        return "".join(rng.choice(alphabet) for _ in range(n))
    cwds = ["/", "//", "/work/my proj", "C:\\Users\\x", "/" + "x" * 300, "~/a", "/a::b//c"] + \
           [word(rng.randint(1, 40)) for _ in range(150)]
    ids = [".", "..", "session-" + "0" * 8, "../a~b", "é/😀"] + [word(rng.randint(1, 20)) for _ in range(150)]

    def units(text):
        data = text.encode("utf-16-le", "surrogatepass")
        return [data[i] | data[i + 1] << 8 for i in range(0, len(data), 2)]
    spec = tmp_path / "keys.json"
    spec.write_text(json.dumps({"cwds": [units(c) for c in cwds], "ids": [units(i) for i in ids]}))
    done = real_dsh.node_script(DRIVER, "keys", str(spec))
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    assert theirs["projectKeys"] == [project_key(c) for c in cwds]
    assert theirs["segments"] == [encode_segment(i) for i in ids]


# --- dshctl reads what dsh wrote ------------------------------------------------------------------

def _title_or_none(request: dict):
    messages = (request.get("body") or {}).get("messages") or []
    if messages and str(messages[0].get("content", "")).startswith(TITLE_PROMPT):
        return Sse([chunk({"role": "assistant", "content": "Notes in the workspace"}), chunk(finish="stop"), "[DONE]"])
    return None


def _headless_turn(real_dsh, home: Path, workspace: Path) -> None:
    read_call = {"index": 0, "id": "call_1", "type": "function",
                 "function": {"name": "read", "arguments": json.dumps({"file_path": "notes.txt"})}}
    with SseServer() as server:
        server.route = _title_or_none
        server.script += [
            Sse([chunk({"role": "assistant", "content": "Let me read it."}), chunk({"tool_calls": [read_call]}),
                 chunk(finish="tool_calls"), chunk(usage={"prompt_tokens": 20, "completion_tokens": 5}), "[DONE]"]),
            Sse([chunk({"role": "assistant", "content": "The notes "}), chunk({"content": "say "}),
                 chunk({"content": "alpha."}), chunk(finish="stop"),
                 chunk(usage={"prompt_tokens": 30, "completion_tokens": 3}), "[DONE]"])]
        env = real_dsh.env(home, DEEPSEEK_BASE_URL=f"http://127.0.0.1:{server.port}", DEEPSEEK_API_KEY="sk-test")
        done = real_dsh.run(home, "--profile", "headless", "--patch", str(real_dsh.no_typert_patch),
                            "What do the notes say?", cwd=workspace, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "The notes say alpha."


@pytest.fixture(scope="module")
def dsh_home(real_dsh, tmp_path_factory):
    """A home holding one session real dsh wrote: a headless turn with a tool call, in a workspace."""
    base = tmp_path_factory.mktemp("dshhome")
    home, workspace = base / "home", base / "the workspace é"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("alpha\n")
    _headless_turn(real_dsh, home, workspace)
    return home, workspace


def test_dshctl_reads_the_log_dsh_wrote_as_dsh_does(real_dsh, dsh_home):
    home, workspace = dsh_home
    store = SessionStore(home)
    [info] = store.list()
    assert info.id.startswith("session-") and info.header["cwd"] == str(workspace)
    assert info.path.parent.parent.name == project_key(str(workspace))
    ours = dshctl_reads(store, info.id)
    assert DSH_ONLY <= set(ours["types"]) and {"tool/call", "tool/result"} <= set(ours["types"])
    assert ours["knobs"] == {"preset": "workspace-write", "sandbox": "workspace-write", "approval": "ask"}
    assert ours["title"]["title"] and ours["requestContext"]["model"]
    report = dsh_reads(real_dsh, store.root)
    assert report["listed"] == [info.header]
    same_reading(report["sessions"][info.id], ours)


def test_the_cli_lists_and_shows_a_dsh_session_by_its_uuid_prefix(dsh_home):
    home, workspace = dsh_home
    listed = subprocess.run([DSHCTL, "--home", str(home), "session", "list", "--format", "json"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    [item] = json.loads(listed.stdout)
    assert item["cwd"] == str(workspace)
    prefix = item["id"].removeprefix("session-")[:6]
    shown = subprocess.run([DSHCTL, "--home", str(home), "session", "show", prefix, "--format", "json"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["header"]["id"] == item["id"] and doc["repair"] == []
    assert doc["knobs"]["approval"] == "ask" and doc["title"]["eventSeq"] > 0
    assert doc["history"][-1]["content"] == [{"type": "text", "text": "The notes say alpha."}]
    text = subprocess.run([DSHCTL, "--home", str(home), "session", "show", prefix],
                          capture_output=True, text=True, timeout=60)
    assert "policy   permissions workspace-write, sandbox workspace-write, approval ask" in text.stdout
    assert f"title    {doc['title']['title']}" in text.stdout


def test_a_dsh_session_dshctl_resumed_is_still_read_by_dsh(real_dsh, dsh_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(dsh_home[0] / "sessions", home / "sessions")     # the profile (node_modules) is not needed
    store = SessionStore(home)
    [info] = store.list()
    before = len(store.read(info.id).events)
    with store.open(store.resolve(info.id[len("session-"):][:8])) as log:
        write_turn(log, 2, "one more from dshctl", tool=False)
    report = dsh_reads(real_dsh, store.root)
    same_reading(report["sessions"][info.id], dshctl_reads(store, info.id))
    assert len(report["sessions"][info.id]["types"]) > before
    assert os.path.isfile(info.path)


def _random_splices(rng: random.Random, log) -> None:
    """A run of valid inbox splices (inserts, claims, cancels) on both inboxes, as dsh's Inbox makes them."""
    queues = {"next-turn": [], "next-step": []}
    for n in range(rng.randint(1, 12)):
        target = rng.choice(list(queues))
        queue = queues[target]
        start = rng.randint(0, len(queue))
        removed = rng.randint(0, len(queue) - start)
        inserted = [{"id": f"m{n}-{k}", "role": "user", "content": [{"type": "text", "text": f"q{n}.{k}"}],
                     "source": {"kind": "user"}} for k in range(rng.randint(0, 2))]
        data = {"target": target, "start": start, "inserted": inserted}
        if removed:
            data["removedCount"] = removed
        log.append("agent/inbox/spliced", data)
        queue[start:start + removed] = inserted


def test_the_inbox_fold_agrees_with_dshs_inbox(real_dsh, tmp_path):
    rng = random.Random(4819)
    store = SessionStore(tmp_path)
    ids = []
    for _ in range(25):
        log = store.create(cwd="/w")
        write_turn(log, 1, "before the queue", tool=False)
        _random_splices(rng, log)
        log.close()
        ids.append(log.id)
    report = dsh_reads(real_dsh, store.root)
    pending = 0
    for session_id in ids:
        ours = dshctl_reads(store, session_id)
        assert report["sessions"][session_id]["inbox"] == ours["inbox"]
        pending += len(ours["inbox"]["nextTurn"]) + len(ours["inbox"]["nextStep"])
    assert pending > 0
