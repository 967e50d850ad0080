"""Session logs written by dshctl's own code paths, one of every event family dshctl writes.

``build_zoo(tmp_path)`` runs dshctl's agent loop on a host booted in this process (the scripted model,
fs-tools, code mode, the tool-result pruner, compaction) in a real workspace, resumes the session on a
second host, logs a permission preset, a refused approval, a title and plan mode on a second profile, repairs a session a
crash left open, and keeps an old-form session (bare uuid id, no cwd,
as dshctl wrote them before) — so the differential tests can hand the whole root to dsh.
"""
from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from dshctl.agents.session.store import SessionStore
from tests.agents.loop_rows import PROBE, agent_rows
from tests.agents.session_helpers import write_turn
from tests.host.helpers import InProcess, bundle_dir, make_home, write

REPO = Path(__file__).resolve().parents[2]
PROGRAM = 'said = await tools.echo({"text": "from code"})\nprint(said)\nreturn {"said": said}'
REPLIES = [
    {"reasoning": "The user wants the notes.", "text": "Let me look.",
     "toolCalls": [{"name": "read_file", "arguments": {"path": "notes.md"}},
                   {"name": "no_such_tool", "arguments": {}}]},
    {"text": "The notes say hello."},
    {"toolCalls": [{"name": "run_code", "arguments": {"code": PROGRAM, "description": "echo from code"}}]},
    {"text": "The code ran."},
    {"text": "Summary: the notes were read and the code ran."},          # the compaction's request
    {"text": "Cut short", "finish": "length"},
]


@dataclass
class Zoo:
    home: Path
    workspace: Path
    main: str             # the agent session (every loop family), resumed once
    crashed: str          # a turn a crash left open, closed by dshctl's repair
    legacy: str           # the old form: a bare uuid id under sessions/_no-cwd/
    empty: str            # created, never used: a header frame only (dsh writes nothing until an event)
    permissions: str      # a permission preset, a sandbox mode, an approval asked and decided

    @property
    def root(self) -> Path:
        return self.home / "sessions"


def written_families() -> set[str]:
    """Every event type dshctl's own code appends (read from its source, so a new one is noticed)."""
    found: set[str] = set()
    for path in (REPO / "dshctl").rglob("*.py"):
        found |= set(re.findall(r'(?:append|_log)\(\s*"([a-z-]+/[a-z/-]+)"', path.read_text()))
    return found


def _zoo_home(tmp_path: Path, workspace: Path) -> Path:
    rows = agent_rows(REPLIES, probe={}, fs_root=str(workspace), loop={"system": "Be brief."})
    for row in ({"id": "code-mode", "name": "@dshctl/code-mode", "config": {"wallSeconds": 20}},
                {"id": "compaction-basic", "name": "@dshctl/compaction-basic", "config": {"auto": False}},
                {"id": "pruner", "name": "@dshctl/tool-result-pruner", "config": {"maxChars": 200, "keepChars": 50}}):
        rows += f"    - {json.dumps(row)}\n"
    home = make_home(tmp_path, rows)
    write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    return home


async def _turn(agent, prompt: str) -> None:
    agent.followup(prompt)
    await agent.when_idle()


async def _agent_session(home: Path, workspace: Path) -> str:
    async with InProcess(home) as host:
        agent = await host.root.get("agents").open(None, cwd=str(workspace))
        await _turn(agent, "What do the notes say?")
        await _turn(agent, "Echo something from code.")
        await host.root.get("compaction").compact_now(agent)
        await _turn(agent, "Say a lot.")
        agent.append("agent-preset/selected", {"agentPreset": "coder"})
        agent.append("dshctl-zoo/note", {"kept": True}, ignorable=True)
        agent.session.commit()
        session_id = agent.id
    async with InProcess(home) as host:                     # a new host: the session comes back from its log
        agent = await host.root.get("agents").open(session_id[:14])
        await _turn(agent, "And again?")
    return session_id


PERMISSION_REPLIES = [
    {"text": "Echo under approval", "when": "Generate the session title"},   # only the title request
    {"toolCalls": [{"name": "echo", "arguments": {"text": "x"}}]}, {"text": "ok"}, {"text": "planned"}]


def _permission_home(tmp_path: Path) -> Path:
    """A second profile of the same home: the sandbox and approval rows, ``echo`` asks first."""
    rows = agent_rows(PERMISSION_REPLIES, probe={})
    rows += '    - {"id": "sandbox", "name": "@dshctl/sandbox", "config": {"mode": "read-only"}}\n'
    rows += '    - {"id": "approval", "name": "@dshctl/approval", "config": {"ask": ["echo"]}}\n'
    rows += '    - {"id": "plan-mode", "name": "@dshctl/plan-mode"}\n'
    rows += '    - {"id": "session-title", "name": "@dshctl/session-title"}\n'
    home = make_home(tmp_path, rows, profile="perm")
    write(bundle_dir(home, "perm") / "plugins" / "probe.py", PROBE.lstrip())
    return home


async def _permission_session(home: Path, workspace: Path) -> str:
    from dshctl.agents.approval.plugin import apply_preset
    async with InProcess(home, profile="perm") as host:
        agent = await host.root.get("agents").open(None, cwd=str(workspace))
        apply_preset(host.root, host.root.get("approval"), agent, "workspace-write")
        await _turn(agent, "Echo, if you may.")           # nobody answers the approval: refused; titled
        await _turn(agent, "/plan Plan the next step.")   # plan mode on
        return agent.id


def _crashed_session(home: Path, workspace: Path) -> str:
    store = SessionStore(home)
    log = store.create(cwd=str(workspace / "sub dir ü"))
    write_turn(log, 1, "first")
    write_turn(log, 2, "cut off here", end=False)           # a tool call logged, no step/turn end
    log.commit()
    import os
    os.close(log._lock_fd)                                  # the process dies: no close, no closers
    log._lock_fd = None
    store.open(log.id).close()                              # dshctl's repair: closers, then end-seed
    return log.id


def _legacy_session(home: Path) -> str:
    log = SessionStore(home).create(session_id=str(uuid.uuid4()))    # as dshctl wrote them before
    write_turn(log, 1, "an old one")
    log.close()
    return log.id


def build_zoo(tmp_path: Path) -> Zoo:
    workspace = tmp_path / "work space"
    write(workspace / "notes.md", "# Notes\n" + "hello from the notes, long enough to be pruned\n" * 8)
    home = _zoo_home(tmp_path, workspace)
    main = asyncio.run(asyncio.wait_for(_agent_session(home, workspace), 120))
    empty = SessionStore(home).create(cwd=str(workspace))
    empty.close()
    permissions = asyncio.run(asyncio.wait_for(_permission_session(_permission_home(tmp_path), workspace), 60))
    return Zoo(home, workspace, main, _crashed_session(home, workspace), _legacy_session(home), empty.id,
               permissions)
