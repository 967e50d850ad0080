"""README.md's tour, run as a new user runs it from the top of a checkout: it must leave the tracked
demo home (examples/home) as it was; the edit it shows happens in a copy (the tour once ran
`profile enable echo-lower` on examples/home itself, and the suite then failed with "a test modified
examples/home"). Lines that need a running host, the network or placeholder paths are not run here;
their commands have their own tests."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

from demo_home import copy_demo_home

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RUN = re.compile(r"^(cp |dshctl --home \S+ (profile|preset) |dshctl schema show )")


def tour() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.split(r"\n## A [\w-]+ tour\n", text, maxsplit=1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def digest(tree: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(tree.rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_the_tour_leaves_the_tracked_demo_home_untouched(tmp_path):
    checkout = tmp_path / "checkout"
    copy_demo_home(checkout / "examples" / "home")
    before = digest(checkout / "examples" / "home")
    ran = [line for line in tour() if RUN.match(line)]
    assert any(" enable " in line for line in ran)  # the edit is part of what runs
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    for line in ran:
        proc = subprocess.run(["bash", "-c", line], cwd=checkout, env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, (line, proc.stderr)
    assert digest(checkout / "examples" / "home") == before
    edited = [ln for ln in tour() if " enable " in ln][0].split("--home ")[1].split()[0]
    assert digest(checkout / edited) != before  # the copy got the edit
