"""A bash-shaped tool wired the way the bash tool routes through the sandbox (a test plugin: the real
``bash`` tool lives with the tools): each call resolves the session's policy, runs confined, reports a
denial with dsh's markers, and an escalated retry (``sandbox_permissions`` + ``justification``) asks
through ``ctx.approval`` before anything runs."""
import json

from tests.agents.loop_rows import PROBE, agent_rows
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

SHELL = '''
from dshctl.agents.approval.gate import approve_escalation
from dshctl.agents.sandbox.run import run_confined
from dshctl.agents.tools.definition import Tool, error_result, text_result

name = "mini-bash"
inject = ["tools"]
schema = {"type": "object", "default": {}}

def apply(ctx, config):
    async def bash(args, run):
        policy = ctx.get("sandboxPolicy").resolve(run.agent.session)
        if "sandbox_permissions" in args or "justification" in args:
            try:
                granted = await approve_escalation(ctx, run, requested_mode=args.get("sandbox_permissions"),
                                                   justification=args.get("justification"),
                                                   effective_mode=policy.mode, subject="command")
            except ValueError as exc:
                return error_result(str(exc), "SANDBOX_ESCALATION")
            policy = policy.with_mode(granted)
        result = await run_confined(["bash", "-c", args["command"]], policy, sandbox=ctx.get("sandbox"))
        lines = [result.stdout + result.stderr, *result.markers(escalation=True)]
        return text_result("\\n".join(lines).strip())

    params = {"type": "object", "required": ["command"], "properties": {
        "command": {"type": "string"}, "justification": {"type": "string"},
        "sandbox_permissions": {"enum": ["workspace-write", "danger-full-access"]}}}
    ctx.tools.register(ctx, "bash", Tool("bash", "run a command", bash, params))
'''

ANSWER = '''
name = "answer"
schema = {"type": "object", "default": {}}

def apply(ctx, config):
    async def answer(req, next_):
        return "allowed-once"
    ctx.on("approval/request", answer)
'''


def home_for(tmp_path, replies, answer: bool):
    rows = agent_rows(replies, probe={})
    sandbox = {"mode": "read-only", "backends": ["bwrap"], "workspaceRoot": str(tmp_path / "work")}
    rows += f'    - {json.dumps({"id": "sandbox", "name": "@dshctl/sandbox", "config": sandbox})}\n'
    rows += '    - {"id": "approval", "name": "@dshctl/approval"}\n'
    rows += '    - {"id": "mini-bash", "name": "./plugins/mini_bash.py"}\n'
    if answer:
        rows += '    - {"id": "answer", "name": "./plugins/answer.py"}\n'
    home = make_home(tmp_path, rows)
    for file, text in (("probe.py", PROBE), ("mini_bash.py", SHELL), ("answer.py", ANSWER)):
        write(bundle_dir(home) / "plugins" / file, text.lstrip())
    return home


def results(agent):
    return [e["data"]["message"]["content"][0]["content"][0]["text"]
            for e in agent.session.events if e["type"] == "tool/result"]


async def turn(host, work):
    # the session's cwd is its workspace (the policy's root): the host's own cwd would be the default
    agent = await host.root.get("agents").open(None, cwd=str(work))
    agent.followup("write the file")
    await agent.when_idle()
    return agent


def calls(work, *extra):
    write_it = {"command": f"echo hi > {work}/out.txt && echo wrote"}
    return [{"toolCalls": [{"name": "bash", "arguments": {**write_it, **e}}]} for e in ({}, *extra)] + \
        [{"text": "done"}]


ESCALATE = {"sandbox_permissions": "workspace-write", "justification": "The user asked for the file."}
MARKERS = ("[sandbox: file access denied under read-only mode]\n[sandbox: escalation available — retry this "
           "exact command once with sandbox_permissions (the narrowest wider mode that suffices) + "
           "justification; the approval prompt asks the user]")


@run_async()
async def test_read_only_denies_then_an_approved_escalation_writes(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    async with InProcess(home_for(tmp_path, calls(work, ESCALATE), answer=True)) as host:
        agent = await turn(host, work)
        denied, escalated = results(agent)
        assert "Read-only file system" in denied and denied.endswith(MARKERS)
        assert escalated == "wrote" and (work / "out.txt").read_text() == "hi\n"
        asked = [e["data"] for e in agent.session.events if e["type"] == "approval/asked"]
        assert [a["reason"] for a in asked] == ["escalate sandbox to workspace-write: The user asked for the file."]


@run_async()
async def test_an_escalation_nobody_answers_runs_nothing(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    half = {"sandbox_permissions": "danger-full-access"}
    async with InProcess(home_for(tmp_path, calls(work, ESCALATE, half), answer=False)) as host:
        agent = await turn(host, work)
        _, unanswered, unpaired = results(agent)
        assert unanswered == ('Error: sandbox escalation to "workspace-write" requires approval, but no approval '
                              "channel is available")
        assert unpaired == "Error: invalid escalation: sandbox_permissions requires a justification"
        assert not (work / "out.txt").exists()
