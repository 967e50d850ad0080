"""A scratch copy of the bundled demo home (examples/home) for a test to change."""
from __future__ import annotations

import shutil
from pathlib import Path

DEMO_HOME = Path(__file__).resolve().parents[1] / "examples" / "home"


def copy_demo_home(target: Path, **kwargs) -> Path:
    """``examples/home`` copied to ``target`` without what running it leaves behind (`python3 dev.py
    demo` writes the host's state under .dshctl and the agent's session logs under sessions/), so a
    test sees the home as committed whatever ran in the checkout before."""
    shutil.copytree(DEMO_HOME, target, ignore=shutil.ignore_patterns(".dshctl", "sessions"), **kwargs)
    return target
