"""Code Mode inside the sandbox: the attacks that worked when it was "bounds, not a sandbox" (reading
the host's /proc/<pid>/environ, a setsid child outliving the run) and their friends, on real workers
under each backend; and run_code failing closed on a host with no backend."""
from __future__ import annotations

import asyncio
import json
import os

import pytest

from dshctl.agents.codemode.runtime import Namespace, run_program
from dshctl.agents.codemode.worker import WorkerProcess
from dshctl.agents.sandbox import SandboxService
from tests.agents.codemode_helpers import FAST
from tests.agents.loop_rows import PROBE, agent_rows
from tests.agents.test_codemode_plugin import one_turn, run_code
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

SERVICES = {name: SandboxService([name]) for name in ("bwrap", "landlock")}

ATTACK = """import os, socket
out = {}
def attempt(name, fn):
    try:
        out[name] = fn()
    except OSError as exc:
        out[name] = "refused: " + type(exc).__name__
attempt("host_environ", lambda: open("/proc/%(host)d/environ", "rb").read().decode("latin-1"))
attempt("home_state", lambda: open(%(netrc)r).read())
attempt("sessions", lambda: os.listdir(%(sessions)r))
attempt("write_outside", lambda: open(%(outside)r, "w").write("x"))
attempt("write_scratch", lambda: open("scratch.txt", "w").write("ok"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", %(port)d), 2).close())
out["env"] = sorted(os.environ)
return out"""


@pytest.fixture
def host_state(tmp_path, monkeypatch):
    home, dsh = tmp_path / "home", tmp_path / "dsh"
    (dsh / "sessions").mkdir(parents=True)
    home.mkdir()
    (home / ".netrc").write_text("password HOME-SECRET")
    (dsh / "sessions" / "s1.jsonl").write_text("{}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(dsh))
    monkeypatch.setenv("LLM_API_KEY", "sk-HOST-SECRET")
    return home, dsh


@pytest.mark.parametrize("backend", sorted(SERVICES))
def test_a_program_cannot_reach_the_hosts_secrets(backend, host_state, tmp_path):
    import socket
    home, dsh = host_state
    server = socket.create_server(("127.0.0.1", 0))
    outside = tmp_path / "outside.txt"
    program = ATTACK % {"host": os.getpid(), "netrc": str(home / ".netrc"), "sessions": str(dsh / "sessions"),
                        "outside": str(outside), "port": server.getsockname()[1]}
    worker = WorkerProcess(sandbox=SERVICES[backend])
    assert worker.command.backend.name == backend
    result = asyncio.run(run_program(program, [Namespace("tools", {})], FAST, worker=worker))
    server.close()
    out = result.value
    assert result.error is None, result.error
    for attack in ("host_environ", "home_state", "sessions", "write_outside", "network"):
        assert str(out[attack]).startswith("refused: "), (attack, out[attack])
    assert out["write_scratch"] == 2 and not outside.exists()
    assert "LLM_API_KEY" not in out["env"] and "sk-HOST-SECRET" not in json.dumps(out)


def test_danger_full_access_is_the_old_unconfined_worker(host_state):
    worker = WorkerProcess(mode="danger-full-access")
    result = asyncio.run(run_program(f"return open({str(host_state[0] / '.netrc')!r}).read()",
                                     [Namespace("tools", {})], FAST, worker=worker))
    assert result.value == "password HOME-SECRET"


@run_async()
async def test_run_code_fails_closed_without_a_backend(tmp_path):
    rows = agent_rows([{"toolCalls": [run_code("return 1")]}, {"text": "ok"}], probe={}, loop={})
    rows += '    - {"id": "code-mode", "name": "@dshctl/code-mode", "config": {"prestart": 0}}\n'
    # a @dshctl/sandbox row whose chain is empty: ctx.sandbox exists and can confine nothing
    rows += '    - {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"backends": []}}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    async with InProcess(home) as host:
        agent = await one_turn(host, "run it")
        result = next(e for e in agent.session.events if e["type"] == "tool/result")["data"]["message"]["content"][0]
        assert result["isError"] and result["content"][0]["text"].startswith(
            'Error: sandbox mode "workspace-write" is requested but no sandbox backend is usable on this host')
