"""dsh's bash tool and background jobs on real processes: texts, markers, limits, a clean environment."""
import asyncio
import os
import time
from pathlib import Path

from dshctl.agents.tools import shell
from dshctl.agents.tools.fsbase import Roots
from dshctl.agents.tools.jobs import job_tools
from tests.agents.dsh_tools_helpers import BASH_CONFIG, Caller, agent_with
from tests.host.helpers import run_async, write


def bash_agent(root, tmp_spill, **config):
    tool = shell.BashTool(Roots(None), {**BASH_CONFIG, **config}, tmp_spill)
    definition = shell.Tool("bash", "run", tool.execute, shell.BASH_PARAMETERS)
    return Caller(agent_with(root, [definition, *job_tools(tool.jobs)])), tool


def cmd(command, **extra):
    return {"command": command, "description": "test", **extra}


@run_async()
async def test_output_and_markers_read_as_dshs(tmp_path):
    (tmp_path / "sub").mkdir()
    ask, _ = bash_agent(tmp_path, tmp_path)
    assert await ask.text("bash", cmd("echo hi; echo err >&2")) == "hi\n[stderr]\nerr\n"
    assert await ask.text("bash", cmd("exit 3")) == "(no output)\n[exit code: 3]"
    assert await ask.text("bash", cmd("true")) == "(no output)"
    assert await ask.text("bash", cmd("echo -n noeol")) == "noeol"
    assert await ask.text("bash", cmd("pwd", workdir="sub")) == f"{tmp_path}/sub\n"
    assert await ask.text("bash", cmd("pwd")) == f"{tmp_path}\n"
    assert await ask.text("bash", cmd("kill -9 $$")) == "(no output)\n[killed by signal: SIGKILL]"


@run_async()
async def test_timeout_kills_the_whole_group(tmp_path):
    ask, _ = bash_agent(tmp_path, tmp_path, graceMs=200)
    started = time.monotonic()
    out = await ask.text("bash", cmd(f"(sleep 30; touch {tmp_path}/late) & sleep 30", timeoutMs=300))
    assert out == "(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]"
    assert time.monotonic() - started < 5
    await asyncio.sleep(0.3)
    assert not (tmp_path / "late").exists()


@run_async()
async def test_long_output_keeps_its_tail_and_spills_the_rest(tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    ask, _ = bash_agent(tmp_path, spill, maxOutputBytes=1000)
    out = await ask.text("bash", cmd("seq 1 100000"))
    assert out.splitlines()[-3:-1] == ["100000", ""] and len(out) < 1200
    path = out.rsplit("full output: ", 1)[1].rstrip("]")
    assert Path(path).read_text().splitlines() == [str(n) for n in range(1, 100001)]


@run_async()
async def test_the_environment_holds_no_host_credential(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-host-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    ask, _ = bash_agent(tmp_path, tmp_path, env={"EXTRA": "given"})
    out = await ask.text("bash", cmd("env"))
    assert "sk-host-secret" not in out and "sk-other" not in out and "ghp-secret" not in out
    names = {line.split("=", 1)[0] for line in out.splitlines() if "=" in line}
    assert {"PATH", "DSH_SHELL", "DSH_SESSION_ID", "EXTRA"} <= names
    assert names <= set(shell.SAFE_ENV) | {"DSH_SHELL", "DSH_SESSION_ID", "EXTRA", "PWD", "SHLVL", "_", "OLDPWD"}


@run_async()
async def test_every_process_starts_through_spawn(tmp_path, monkeypatch):
    seen = []
    real = shell.spawn

    async def recording(argv, cwd, env):
        seen.append((argv, cwd, sorted(env)))
        return await real(argv, cwd, env)
    monkeypatch.setattr(shell, "spawn", recording)
    ask, tool = bash_agent(tmp_path, tmp_path)
    await ask("bash", cmd("echo one"))
    await ask("bash", cmd("echo two", run_in_background=True))
    await tool.jobs.kill_all()
    assert [s[0] for s in seen] == [["bash", "-c", "echo one"], ["bash", "-c", "echo two"]]
    assert all(s[1] == str(tmp_path) for s in seen)


@run_async()
async def test_background_jobs(tmp_path):
    ask, tool = bash_agent(tmp_path, tmp_path, graceMs=200)
    assert await ask.text("job_list", {}) == "(no background jobs)"
    assert await ask.text("bash", cmd("echo bg; sleep 0.3; echo done", run_in_background=True)) == \
        "started background job bash-1"
    assert await ask.text("job_list", {}) == "bash-1 [bash] running — echo bg; sleep 0.3; echo done"
    assert await ask.text("job_output", {"job_id": "bash-1", "wait": True}) == \
        "bg\ndone\n[status: completed, exit code: 0]"
    assert await ask.text("job_output", {"job_id": "bash-1"}) == "(no new output)\n[status: completed, exit code: 0]"
    assert await ask.text("bash", cmd("sleep 30", run_in_background=True)) == "started background job bash-2"
    assert await ask.text("job_kill", {"job_id": "bash-2"}) == "requested cancellation of job bash-2"
    assert (await ask.text("job_output", {"job_id": "bash-2", "wait": True, "timeout_ms": 3000})).endswith(
        "[status: killed, signal: SIGTERM]")
    assert await ask.text("job_kill", {"job_id": "bash-1"}) == \
        "job bash-1 had already finished [status: completed, exit code: 0]"
    for name, args in (("job_output", {"job_id": "bogus"}), ("job_kill", {"job_id": "x"})):
        out = await ask(name, args)
        assert out["isError"] and out["content"][0]["text"] == f"Error: unknown job {args['job_id']}"
    other = Caller(agent_with(tmp_path, [t for t in ask.agent.registry.view("global").values()], session_id="s-2"))
    assert await other.text("job_list", {}) == "(no background jobs)"
    await ask("bash", cmd("sleep 30", run_in_background=True))
    await tool.jobs.kill_all()
    assert all(j.proc.returncode is not None for j in tool.jobs.jobs.values())


@run_async()
async def test_bad_input_ends_in_an_error_result(tmp_path):
    write(tmp_path / "f.txt", "x")
    ask, _ = bash_agent(tmp_path, tmp_path)
    cases = [(cmd(""), "TOOL_ARGUMENTS_INVALID"), ({"command": "ls"}, "TOOL_ARGUMENTS_SCHEMA"),
             (cmd("ls", timeoutMs=-1), "TOOL_ARGUMENTS_INVALID"), (cmd("ls", workdir=".."), "FS_OUTSIDE_WORKSPACE"),
             (cmd("ls", workdir="/"), "FS_OUTSIDE_WORKSPACE"), (cmd("ls", workdir="f.txt"), "FS_NOT_DIRECTORY"),
             (cmd("ls", workdir="nowhere"), "FS_NOT_DIRECTORY"),
             (cmd("ls", sandbox_permissions="danger-full-access"), "TOOL_ARGUMENTS_INVALID"),
             (cmd("ls", sandbox_permissions="danger-full-access", justification="why"), "TOOL_ARGUMENTS_INVALID")]
    for args, code in cases:
        out = await ask("bash", args)
        assert out["isError"] and out["error"]["code"] == code, (args, out)
    assert os.listdir(tmp_path) == ["f.txt"]


@run_async()
async def test_an_abort_stops_the_command_and_its_children(tmp_path):
    ask, _ = bash_agent(tmp_path, tmp_path, graceMs=200)

    async def abort_soon():
        await asyncio.sleep(0.3)
        ask.agent.abort_event.set()
    started = time.monotonic()
    out, _ = await asyncio.gather(ask("bash", cmd(f"(sleep 5; touch {tmp_path}/late) & sleep 30")), abort_soon())
    assert out.get("isError") and out["error"]["code"] == "TOOL_ABORTED"
    assert time.monotonic() - started < 5
    await asyncio.sleep(0.2)
    assert not (tmp_path / "late").exists()


@run_async()
async def test_what_a_command_leaves_running_does_not_hold_the_call(tmp_path):
    ask, _ = bash_agent(tmp_path, tmp_path)
    started = time.monotonic()
    assert await ask.text("bash", cmd(f"echo hi; (sleep 30; touch {tmp_path}/late) &")) == "hi\n"
    assert time.monotonic() - started < 5
    await asyncio.sleep(0.2)
    assert not (tmp_path / "late").exists()
