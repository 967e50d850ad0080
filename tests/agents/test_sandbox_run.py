"""``run_confined`` (what the bash tool calls) and the file tools' fence, under the same policies."""
from __future__ import annotations

import asyncio
import os

import pytest

from dshctl.agents.sandbox import SandboxPolicy, SandboxService, SandboxUnavailableError
from dshctl.agents.sandbox.fence import FsSandboxDenied, checked_read_target, checked_write_target
from dshctl.agents.sandbox.run import run_confined

BWRAP = SandboxService(["bwrap"])


def test_a_denied_write_reports_dshs_markers(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    run = asyncio.run(run_confined(["bash", "-c", "echo x > /etc/dshctl-test-escape"],
                                   SandboxPolicy("workspace-write", str(ws)), sandbox=BWRAP))
    assert run.exit_code != 0 and run.denied and not os.path.exists("/etc/dshctl-test-escape")
    assert run.markers(escalation=True) == [
        "[sandbox: file access denied under workspace-write mode]",
        "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest "
        "wider mode that suffices) + justification; the approval prompt asks the user]"]


def test_a_time_out_kills_the_tree(tmp_path):
    mark = f"dshctl-run-timeout-{os.getpid()}"
    run = asyncio.run(run_confined(["bash", "-c", f"setsid sleep 30 & exec -a {mark} sleep 30"],
                                   SandboxPolicy("workspace-write", str(tmp_path)), sandbox=BWRAP, timeout=0.5))
    assert run.timed_out and run.exit_code is None
    assert not any(mark.encode() in open(f"/proc/{p}/cmdline", "rb").read()
                   for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/cmdline"))


def test_a_runner_failure_is_sandbox_unavailable(tmp_path):
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    elsewhere.mkdir()            # on the host, but under the sandbox's private /tmp it does not exist
    with pytest.raises(SandboxUnavailableError) as info:
        asyncio.run(run_confined(["true"], SandboxPolicy("workspace-write", str(ws)), sandbox=BWRAP,
                                 cwd=str(elsewhere)))
    assert "Runner failure: bwrap: " in str(info.value)


def test_the_fence_follows_the_same_policy(tmp_path, monkeypatch):
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (ws / "link").symlink_to(tmp_path)                     # a way out of the workspace
    policy = SandboxPolicy("workspace-write", str(ws))
    assert checked_write_target(policy, str(ws / "a.txt")) == str(ws / "a.txt")
    with pytest.raises(FsSandboxDenied, match="file access denied under workspace-write mode"):
        checked_write_target(policy, str(ws / "link" / "out.txt"))
    with pytest.raises(FsSandboxDenied, match='cannot write "x": file access denied under read-only mode'):
        checked_write_target(SandboxPolicy("read-only", str(ws)), str(ws / "x"), "x")
    assert checked_write_target(SandboxPolicy("danger-full-access", str(ws)), str(tmp_path / "y"))
    with pytest.raises(FsSandboxDenied):
        checked_read_target(policy, str(home / ".netrc"))
