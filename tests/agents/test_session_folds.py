"""dsh's log-only state folded by dshctl (``folds.py``): the last override wins, a fork's seed is not
replayed into the inbox, and a splice that does not fit its inbox is one clear error in the CLI."""
from __future__ import annotations

import subprocess

from dshctl.agents.session import folds
from dshctl.agents.session.store import SessionStore
from tests.agents.session_helpers import user_message, write_turn
from tests.host.helpers import DSHCTL


def _splice(log, target, start, inserted=(), removed=0):
    data = {"target": target, "start": start, "inserted": list(inserted)}
    if removed:
        data["removedCount"] = removed
    return log.append("agent/inbox/spliced", data)


def test_knobs_and_title_take_the_last_event_and_none_means_the_default(tmp_path):
    log = SessionStore(tmp_path).create(cwd="/w")
    assert folds.knobs(log.events) == {"preset": None, "sandbox": None, "approval": None}
    log.append("sandbox/mode", {"mode": "read-only"})
    log.append("approval/policy", {"policy": "never"})
    log.append("sandbox/mode", {"mode": "workspace-write", "source": "delegation"})
    assert folds.knobs(log.events) == {"preset": None, "sandbox": "workspace-write", "approval": "never"}
    log.append("session/title", {"title": "one", "messageSeqs": [], "source": {"kind": "user"}})
    last = log.append("session/title", {"title": "two", "messageSeqs": [], "source": {"kind": "fallback"}})
    assert folds.title(log.events) == {"title": "two", "messageSeqs": [], "source": {"kind": "fallback"},
                                       "eventSeq": last["seq"], "updatedAt": last["time"]}
    log.close()


def test_the_inbox_replays_splices_after_the_seed_only(tmp_path):
    log = SessionStore(tmp_path).create(cwd="/w")
    _splice(log, "next-turn", 0, [user_message("a", "ma"), user_message("b", "mb")])
    _splice(log, "next-turn", 0, removed=1)                  # the turn took "a"
    seed = len(log.events)
    _splice(log, "next-step", 0, [user_message("c", "mc")])
    inbox = folds.pending_inbox(log.events)
    assert [m["id"] for m in inbox["next-turn"]] == ["mb"] and [m["id"] for m in inbox["next-step"]] == ["mc"]
    forked = folds.pending_inbox(log.events, seed)           # a fork: the parent's splices are not replayed
    assert forked["next-turn"] == [] and [m["id"] for m in forked["next-step"]] == ["mc"]
    _splice(log, "next-step", 1, [user_message("b again", "mb")])
    try:
        folds.pending_inbox(log.events)
        raise AssertionError("a message pending twice must be refused")
    except folds.InboxFoldError as exc:
        assert "already pending" in str(exc)
    log.close()


def test_a_splice_that_does_not_fit_is_one_line_in_show(tmp_path):
    home = tmp_path / "home"
    log = SessionStore(home).create(cwd="/w", session_id="session-bad-inbox")
    write_turn(log, 1, "hi", tool=False)
    _splice(log, "next-turn", 0, removed=2)          # removes from an empty inbox
    log.close()
    shown = subprocess.run([DSHCTL, "--home", str(home), "session", "show", "bad"], capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 1
    assert shown.stderr.splitlines() == [
        f"dshctl: error: {log.path}: cannot read session log: inbox splice at seq {len(log.events) - 1} "
        "does not fit the next-turn inbox",
        "  hint: the file is damaged or was written by another harness version"]
