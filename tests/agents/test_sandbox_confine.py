"""Real confined processes trying to escape, under each backend this machine runs (both, here: dev.py
installs bubblewrap; the kernel offers Landlock), and the fail-closed end when none runs."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
import socket
import subprocess
import threading
import time

import pytest

from dshctl.agents.sandbox import (SANDBOX_UNAVAILABLE, SandboxPolicy, SandboxService,
                                   SandboxUnavailableError)
from dshctl.agents.sandbox.service import BACKENDS_ENV

BACKENDS = ["bwrap", "landlock"]
_SERVICES: dict[str, SandboxService] = {}


def service(backend: str) -> SandboxService:
    if backend not in _SERVICES:
        svc = SandboxService([backend])
        found = svc.backend()
        assert found is not None and found.name == backend, svc.unavailable_reasons   # must run here
        _SERVICES[backend] = svc
    return _SERVICES[backend]


def run(backend, script, policy, **kw):
    command = service(backend).confine(["bash", "-c", script], policy, **kw)
    proc = command.spawn(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.proc.communicate(timeout=20)
    finally:
        proc.kill_tree()
    return proc.proc.returncode, out.decode(), err.decode(), command


@pytest.fixture
def world(tmp_path, monkeypatch, request):
    """A workspace, a place outside it, and a fake user home and dsh home with state in them."""
    ws, home, dsh = (tmp_path / n for n in ("ws", "home", "dsh-home"))
    # outside the workspace and outside /tmp (bwrap's /tmp is private: a path there is simply absent)
    outside = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="dshctl-sandbox-test-"))
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    for d in (ws, home, dsh / "sessions"):
        d.mkdir(parents=True)
    (home / ".netrc").write_text("machine x password HOME-SECRET\n")
    (dsh / "sessions" / "other.jsonl").write_text('{"SESSION-SECRET": 1}\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(dsh))
    return ws, outside, home, dsh


@pytest.mark.parametrize("backend", BACKENDS)
def test_workspace_write_writes_the_workspace_and_its_temp_only(backend, world):
    ws, outside, _, _ = world
    code, out, err, command = run(backend, f"""
        echo in > {ws}/inside.txt && echo wrote-inside
        echo out > {outside}/escape.txt && echo wrote-outside
        echo tmp > "$TMPDIR/t" && echo wrote-temp
        echo x > /tmp/shared-$$ && echo wrote-shared-tmp-name""", SandboxPolicy("workspace-write", str(ws)))
    assert "wrote-inside" in out and (ws / "inside.txt").read_text() == "in\n"
    assert "wrote-temp" in out
    assert "wrote-outside" not in out and not (outside / "escape.txt").exists()
    assert command.denied(1, err)           # the backend's own denial dialect named the refusal
    if backend == "landlock":               # the host /tmp is not the private temp there
        assert "wrote-shared-tmp-name" not in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_refuses_a_write_in_the_workspace(backend, world):
    ws = world[0]
    (ws / "file.txt").write_text("keep\n")
    code, out, err, _ = run(backend, f"cat {ws}/file.txt; echo new > {ws}/file.txt && echo WROTE",
                            SandboxPolicy("read-only", str(ws)))
    assert out.startswith("keep") and "WROTE" not in out
    assert (ws / "file.txt").read_text() == "keep\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_danger_full_access_runs_unconfined(backend, world):
    ws, outside, _, _ = world
    code, out, _, command = run(backend, f"echo out > {outside}/wide.txt && echo WROTE",
                                SandboxPolicy("danger-full-access", str(ws)))
    assert code == 0 and "WROTE" in out and (outside / "wide.txt").exists()
    assert command.backend.name == "none"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hosts_environ_and_credentials_stay_out(backend, world, monkeypatch):
    ws = world[0]
    monkeypatch.setenv("MODEL_API_KEY", "sk-HOST-SECRET")
    # /proc/<pid>/environ is the environment at exec (whatever launched pytest), so the probe asserts
    # the host's file cannot be read at all, and the confined environment lacks the key set here.
    code, out, err, _ = run(backend, f"""
        cat /proc/{os.getpid()}/environ > /dev/null && echo READ-HOST-ENVIRON
        cat /proc/{os.getppid()}/environ > /dev/null && echo READ-PARENT-ENVIRON
        env""", SandboxPolicy("workspace-write", str(ws)))
    assert "READ-HOST-ENVIRON" not in out and "READ-PARENT-ENVIRON" not in out
    assert "sk-HOST-SECRET" not in out and "MODEL_API_KEY" not in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_credential_passes_only_when_named(backend, world, monkeypatch):
    monkeypatch.setenv("REGISTRY_TOKEN", "tok-123")
    _, out, _, _ = run(backend, "echo token=$REGISTRY_TOKEN", SandboxPolicy("workspace-write", str(world[0])),
                       pass_env=["REGISTRY_TOKEN"])
    assert "token=tok-123" in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_homes_state_and_other_sessions_are_unreadable(backend, world):
    ws, _, home, dsh = world
    code, out, err, _ = run(backend, f"""
        cat {home}/.netrc; cat {dsh}/sessions/other.jsonl; ls {dsh}/sessions; echo done""",
                            SandboxPolicy("workspace-write", str(ws)))
    assert "done" in out
    assert "HOME-SECRET" not in out and "SESSION-SECRET" not in out and "other.jsonl" not in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_workspace_under_the_home_stays_usable(backend, world):
    home = world[2]
    ws = home / "project"
    ws.mkdir()
    (ws / "src.txt").write_text("code\n")
    code, out, _, _ = run(backend, f"cat {ws}/src.txt && echo ok > {ws}/out && cat {home}/.netrc",
                          SandboxPolicy("workspace-write", str(ws)))
    assert out.startswith("code") and (ws / "out").read_text() == "ok\n" and "HOME-SECRET" not in out


def _pids_with(tag: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if tag.encode() in handle.read():
                        found.append(entry)
            except OSError:
                pass
    return found


def _escapee(tag: str) -> str:
    # A child that starts its own session and closes every descriptor: no group kill, no fd finds it.
    return f"setsid bash -c 'exec 0<&- 1>&- 2>&-; exec -a {tag} sleep 60' & sleep 0.3"


def _gone(tag: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while _pids_with(tag):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_setsid_child_does_not_outlive_the_command(backend, world):
    tag = f"escapee-{backend}-{os.getpid()}-end"
    run(backend, _escapee(tag), SandboxPolicy("workspace-write", str(world[0])))
    assert _gone(tag)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill_tree_ends_a_setsid_child_of_a_running_command(backend, world):
    tag = f"escapee-{backend}-{os.getpid()}-kill"
    command = service(backend).confine(["bash", "-c", _escapee(tag) + "; sleep 60"],
                                       SandboxPolicy("workspace-write", str(world[0])))
    proc = command.spawn()
    deadline = time.monotonic() + 5
    while not _pids_with(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_with(tag), "the escapee never started"
    proc.kill_tree()
    assert _gone(tag)


@pytest.fixture
def listener():
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            conn.close()
    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("network", [False, True])
def test_the_network_is_cut_when_the_policy_says_so(backend, network, world, listener):
    port, accepted = listener
    code, out, err, _ = run(backend, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED",
                            SandboxPolicy("workspace-write", str(world[0]), network=network))
    assert ("CONNECTED" in out) is network
    time.sleep(0.1)
    assert bool(accepted) is network


def test_no_backend_fails_closed_with_dshs_error(world):
    svc = SandboxService([])
    with pytest.raises(SandboxUnavailableError) as info:
        svc.confine(["true"], SandboxPolicy("workspace-write", str(world[0])))
    assert info.value.code == SANDBOX_UNAVAILABLE
    assert str(info.value).startswith('sandbox mode "workspace-write" is requested but no sandbox backend is '
                                      "usable on this host; refusing to run the command unconfined.")
    # danger-full-access never consults a backend
    proc = svc.confine(["true"], SandboxPolicy("danger-full-access", str(world[0]))).spawn()
    proc.proc.wait()
    assert proc.kill_tree() == 0


def test_the_documented_setting_forces_no_backend(world, monkeypatch):
    monkeypatch.setenv(BACKENDS_ENV, "none")
    with pytest.raises(SandboxUnavailableError):
        SandboxService().confine(["true"], SandboxPolicy("read-only", str(world[0])))


def test_a_missing_bwrap_falls_through_to_landlock(world, monkeypatch, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))         # no bwrap on PATH
    svc = SandboxService(["bwrap", "landlock"])
    assert svc.backend().name == "landlock"
    assert any(r.startswith("bwrap: ") for r in svc.unavailable_reasons)
    with pytest.raises(SandboxUnavailableError) as info:
        SandboxService(["bwrap"]).confine(["true"], SandboxPolicy("workspace-write", str(world[0])))
    assert "Runner failure: bwrap: bwrap is not installed" in str(info.value)


def test_the_probe_runs_once(world, monkeypatch, tmp_path):
    svc = SandboxService(["bwrap"])
    assert svc.backend().name == "bwrap"
    monkeypatch.setenv("PATH", str(tmp_path))     # bwrap gone from PATH now: the verdict is cached
    assert svc.backend().name == "bwrap"


def test_a_landlock_runner_failure_is_told_apart_from_a_denial(world):
    command = service("landlock").confine(["true"], SandboxPolicy("workspace-write", str(world[0])))
    assert command.runner_failed(125, "dshctl-landlock: landlock_create_ruleset failed") is not None
    assert command.runner_failed(1, "dshctl-landlock: printed by the command itself") is None
    assert command.denied(1, "bash: /x: Permission denied") and not command.denied(0, "Permission denied")
    command.cleanup()
