"""Install scripts a package would run under npm. dshctl runs none; it lists them instead."""
from __future__ import annotations

import json
from pathlib import Path

LIFECYCLE = ("preinstall", "install", "postinstall")


def install_scripts(root: Path) -> dict[str, str]:
    """``{"postinstall": "node x.js", …}``; a ``binding.gyp`` without an install script means npm's
    implicit ``node-gyp rebuild``."""
    try:
        data = json.loads((root / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        data = {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    scripts = scripts if isinstance(scripts, dict) else {}
    out = {k: str(scripts[k]) for k in LIFECYCLE if isinstance(scripts.get(k), str)}
    if "install" not in out and "preinstall" not in out and (root / "binding.gyp").is_file():
        out["install"] = "node-gyp rebuild"
    return out


def describe(name: str, version: str, where: Path, scripts: dict[str, str]) -> str:
    steps = ", ".join(f"{k}: {v}" for k, v in scripts.items())
    return f"{name}@{version} has install scripts not run ({steps}); to run them: cd {where} && " \
           + " && ".join(f"npm run {k}" if k != "install" or "node-gyp" not in v else "npx node-gyp rebuild"
                         for k, v in scripts.items())
