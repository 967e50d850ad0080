#!/usr/bin/env python3
"""Set up and run dshctl on a fresh machine (only Python 3.11+ and git needed).

    python3 dev.py demo   # venv + install, then run the main job on the demo home in examples/
    python3 dev.py test   # venv + install, then the whole test suite

The virtual environment lives in .venv and is re-installed when pyproject.toml changes.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".dshctl-installed"


def ensure_venv() -> None:
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    if sys.version_info < (3, 11):
        sys.exit("dshctl needs Python 3.11 or newer")
    if not (BIN / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(want)


def run(cmd: list[str]) -> int:
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


def demo() -> int:
    dshctl = [str(BIN / "dshctl"), "--home", str(ROOT / "examples" / "home")]
    for sub in (["profile", "dump"], ["preset", "list"]):
        code = run(dshctl + sub)
        if code:
            return code
    # The main job: run the demo profile on the host for a few seconds. A --patch layer (applied after
    # the user layers) turns the status page back on and makes the timer tick every 2 s, so there is
    # something to see; open the printed status page URL while it runs. Without --for it runs until ^C.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        patch = Path(tmp) / "demo.patch.yml"
        patch.write_text("- id: status-page\n  disabled: false\n- id: timer\n  config:\n    interval: 2\n")
        return run(dshctl + ["host", "run", "--patch", str(patch), "--for", "8"])


def test(extra: list[str]) -> int:
    return run([str(BIN / "python"), "-m", "pytest", "-q", *extra])


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test"):
        sys.exit(__doc__)
    ensure_venv()
    sys.exit(demo() if sys.argv[1] == "demo" else test(sys.argv[2:]))


if __name__ == "__main__":
    main()
