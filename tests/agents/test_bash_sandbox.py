"""The real ``bash`` tool (``@dshctl/tool-bash``) under the sandbox row: the session's policy confines
every command (issue 25's "done when"): under ``workspace-write`` a write outside the workspace, a read
of the host's environ and a child kept past the call all fail, with dsh's result text; ``read-only``
refuses a write inside the workspace; ``danger-full-access`` runs as the host's user; no usable backend
is ``SANDBOX_UNAVAILABLE`` and nothing runs. Real processes through bubblewrap (and Landlock)."""
import json
import os

import pytest

from tests.agents.loop_rows import PROBE, agent_rows
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

DENIED = "[sandbox: file access denied under {mode} mode]"


def home_for(tmp_path, calls, mode, backends=("bwrap",)):
    replies = [{"toolCalls": [c if isinstance(c, dict) else
                              {"name": "bash", "arguments": {"command": c, "description": "probe"}}]}
               for c in calls] + [{"text": "done"}]
    rows = agent_rows(replies, probe={})
    sandbox = {"mode": mode, "backends": list(backends)}
    rows += f'    - {json.dumps({"id": "sandbox", "name": "@dshctl/sandbox", "config": sandbox})}\n'
    rows += '    - {"id": "bash", "name": "@dshctl/tool-bash", "config": {"graceMs": 200}}\n'
    rows += '    - {"id": "fs", "name": "@dshctl/tool-fs"}\n'
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    return home


async def one_turn(host, work):
    agent = await host.root.get("agents").open(None, cwd=str(work))
    agent.followup("probe the sandbox")
    await agent.when_idle()
    return [e["data"]["message"]["content"][0]["content"][0]["text"]
            for e in agent.session.events if e["type"] == "tool/result"]


@pytest.fixture
def elsewhere():
    """A directory outside the workspace and outside /tmp (a confined command gets a private /tmp)."""
    import shutil
    import tempfile
    path = tempfile.mkdtemp(prefix="dshctl-outside-", dir="/var/tmp")
    yield __import__("pathlib").Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
@run_async()
async def test_workspace_write_keeps_bash_inside(tmp_path, work, backend, elsewhere):
    outside = elsewhere / "outside.txt"
    calls = [f"echo in > {work}/in.txt && echo wrote", f"echo out > {outside}",
             f"cat /proc/{os.getpid()}/environ | tr '\\0' '\\n' | grep -c PATH",
             f"(setsid sleep 30; echo late > {work}/late.txt) > /dev/null 2>&1 & echo started"]
    async with InProcess(home_for(tmp_path, calls, "workspace-write", (backend,))) as host:
        inside, escaped, environ, child = await one_turn(host, work)
    assert inside == "wrote\n" and (work / "in.txt").read_text() == "in\n"
    assert not outside.exists() and escaped.endswith(DENIED.format(mode="workspace-write") + "\n"
                                                     "[sandbox: escalation available — retry this exact command "
                                                     "once with sandbox_permissions (the narrowest wider mode that "
                                                     "suffices) + justification; the approval prompt asks the user]")
    assert "[exit code:" in environ and "PATH" not in environ.split("[exit code:")[0].replace("grep", "")
    assert child.startswith("started")
    assert not (work / "late.txt").exists()


@run_async()
async def test_read_only_refuses_a_write_in_the_workspace(tmp_path, work):
    async with InProcess(home_for(tmp_path, [f"echo x > {work}/x.txt"], "read-only")) as host:
        (denied,) = await one_turn(host, work)
    assert not (work / "x.txt").exists()
    assert DENIED.format(mode="read-only") in denied


@run_async()
async def test_danger_full_access_runs_as_the_host_user(tmp_path, work, elsewhere):
    outside = elsewhere / "outside.txt"
    async with InProcess(home_for(tmp_path, [f"echo out > {outside} && echo wrote"], "danger-full-access")) as host:
        (result,) = await one_turn(host, work)
    assert result == "wrote\n" and outside.read_text() == "out\n"


@run_async()
async def test_no_backend_fails_closed(tmp_path, work, monkeypatch):
    monkeypatch.setenv("DSHCTL_SANDBOX_BACKENDS", "none")
    async with InProcess(home_for(tmp_path, [f"echo x > {work}/x.txt"], "workspace-write", ())) as host:
        (result,) = await one_turn(host, work)
    assert not (work / "x.txt").exists()
    assert result.startswith('Error: sandbox mode "workspace-write" is requested but no sandbox backend is usable')


@run_async()
async def test_the_file_tools_follow_the_same_policy(tmp_path, work, elsewhere):
    write_in = {"name": "write", "arguments": {"file_path": str(work / "w.txt"), "content": "w"}}
    async with InProcess(home_for(tmp_path, [write_in], "read-only")) as host:
        (denied,) = await one_turn(host, work)
    assert denied == f'Error: cannot write "{work / "w.txt"}": file access denied under read-only mode'
    assert not (work / "w.txt").exists()
    async with InProcess(home_for(tmp_path, [write_in], "workspace-write")) as host:
        (written,) = await one_turn(host, work)
    assert "Created file" in written and (work / "w.txt").read_text() == "w"
