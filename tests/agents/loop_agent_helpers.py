"""Homes that run the loop-agent example bundle (examples/bundles/loop-agent) on the scripted model."""
from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

from tests.agents.loop_rows import agent_home
from tests.host.helpers import bundle_dir, write

BUNDLE_SRC = Path(__file__).resolve().parents[2] / "examples" / "bundles" / "loop-agent"
BASE_ROWS = (  # what dshctl's host-base ships switched off, for the bundle to switch on
    '    - {"id": "compaction-basic", "name": "@dshctl/compaction-basic", "disabled": true}\n'
    '    - {"id": "command-compact", "name": "@dshctl/command-compact", "disabled": true}\n'
    '    - {"id": "tool-result-pruner", "name": "@dshctl/tool-result-pruner", "disabled": true}\n'
    '    - {"id": "workspace", "name": "@dshctl/workspace"}\n')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def install_bundle(home: Path, profile: str = "p") -> Path:
    """Place the bundle as ``plugin add`` would (a clean copy under node_modules, listed in the
    profile's bundles after the base)."""
    pdir = home / "profiles" / profile
    target = pdir / "node_modules" / "dsh-loop-agent"
    shutil.copytree(BUNDLE_SRC, target, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((pdir / "package.json").read_text())
    manifest["dsh"]["profile"]["bundles"].append("dsh-loop-agent")
    write(pdir / "package.json", json.dumps(manifest))
    return target


def loop_agent_home(tmp_path, replies, *, runner: dict | None = None, port: int | None = None, **kw):
    home = agent_home(tmp_path, replies, **kw)
    patch = bundle_dir(home) / "cordis.patch.yml"
    http = {"id": "http", "name": "@dshctl/http", "config": {"host": "127.0.0.1", "port": port or free_port()}}
    write(patch, patch.read_text() + BASE_ROWS + f"    - {json.dumps(http)}\n")
    install_bundle(home)
    cfg = {"pollIntervalMs": 20, "initialBackoffMs": 10, "maxBackoffMs": 40, **(runner or {})}
    write(home / "profiles" / "p" / "cordis.patch.yml", f"- id: loop-runner\n  config: {json.dumps(cfg)}\n")
    return home
