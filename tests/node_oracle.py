"""A long-lived Node process answering JSON lines (tests/node/*.mjs), shared by the differential tests."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent / "node"


class NodeOracle:
    """A long-lived `node <script>` process (tests/node/): one JSON line out, one back."""

    def __init__(self, prefix: Path, script: str = "differential_server.mjs"):
        self.proc = subprocess.Popen(
            ["node", str(NODE_DIR / script), str(prefix)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8")

    def ask(self, layers: list[str]) -> dict:
        return self.request({"layers": layers})

    def request(self, message: dict) -> dict:
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.proc.kill()
            pytest.fail("the Node differential server died:\n" + self.proc.stderr.read()[-2000:])
        reply = json.loads(line)
        if "fatal" in reply:
            pytest.fail("the Node differential server failed:\n" + reply["fatal"])
        return reply

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()
