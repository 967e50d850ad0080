"""Differential: the real dsh reads the session logs our host wrote and folds the same permission
state from their events — its own JSONL scanner, its own ``effectiveSandboxMode``,
``effectiveApprovalPolicy`` and ``effectivePermissionPreset``, and the approval audit pairs."""
from __future__ import annotations

import json

from dshctl.agents.approval.policy import fold_approval_policy, fold_permission_preset
from dshctl.agents.sandbox.policy import fold_sandbox_mode
from tests.agents.loop_rows import PROBE, agent_rows
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write

SCRIPT = """
import { readFileSync } from 'node:fs'
const src = process.argv[2]
const { scanLog } = await import(src + '/session/session-persistence-jsonl/src/format.ts')
const { effectiveSandboxMode } = await import(src + '/sandbox/sandbox-policy/src/session-mode.ts')
const { effectiveApprovalPolicy } = await import(src + '/interaction/user-approval/src/index.ts')
const { effectivePermissionPreset } = await import(src + '/interaction/permission-presets/src/index.ts')
const { events } = scanLog(readFileSync(process.argv[3]))
const asked = events.filter(e => e.type === 'approval/asked').map(e => e.data.id)
const decided = events.filter(e => e.type === 'approval/decided').map(e => [e.data.id, e.data.outcome])
console.log(JSON.stringify({
  sandbox: effectiveSandboxMode(events) ?? null,
  approval: effectiveApprovalPolicy(events) ?? null,
  preset: effectivePermissionPreset(events) ?? null,
  paired: asked.length > 0 && asked.every((id, i) => decided[i]?.[0] === id),
  outcomes: decided.map(d => d[1]),
}))
"""


@run_async()
async def test_dsh_folds_the_policy_our_sessions_log(real_dsh, tmp_path):
    replies = [{"toolCalls": [{"name": "echo", "arguments": {"text": "x"}}]}, {"text": "ok"}] * 2
    rows = agent_rows(replies, probe={}).replace('"compression": "zstd"', '"compression": "none"')
    rows += '    - {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"mode": "read-only"}}\n'
    rows += '    - {"id": "approval", "name": "@dshctl/approval", "config": {"ask": ["echo"]}}\n'
    home = make_home(tmp_path / "home", rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    async with InProcess(home) as host:
        from dshctl.agents.approval.plugin import apply_preset
        agent = await host.root.get("agents").open(None)
        apply_preset(host.root, host.root.get("approval"), agent, "danger-full-access")
        agent.followup("go")
        await agent.when_idle()
        host.root.get("approval").set_policy(agent, "ask")   # a switch after the preset: custom state
        agent.followup("again")
        await agent.when_idle()
        events = list(agent.session.events)
        path = agent.session.path
    ours = {"sandbox": fold_sandbox_mode(events), "approval": fold_approval_policy(events),
            "preset": fold_permission_preset(events)}
    assert ours == {"sandbox": "danger-full-access", "approval": "ask", "preset": "danger-full-access"}
    script = tmp_path / "fold.mts"
    script.write_text(SCRIPT)
    done = real_dsh.node_script(script, str(real_dsh.source / "packages"), str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert {k: theirs[k] for k in ours} == ours
    assert theirs["paired"] and theirs["outcomes"] == ["rejected", "unavailable"]
