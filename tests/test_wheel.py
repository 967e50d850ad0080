"""The built wheel carries the schemas and presets: `dshctl schema show cordis.patch` works from a fresh
venv, run outside the checkout (issue 2, "Done when"), and so do the shipped presets and `python -m dshctl`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(*cmd, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout}\n{proc.stderr}"
    return proc


def test_installed_wheel_finds_its_schemas(tmp_path):
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, ROOT)
    (wheel,) = dist.glob("dshctl-*.whl")
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv)
    sh(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = sh(venv / "bin" / "dshctl", "schema", "show", "cordis.patch", cwd=elsewhere).stdout
    assert json.loads(out)["title"].startswith("dsh patch list")
    where = sh(venv / "bin" / "dshctl", "schema", "path", "entry-list", cwd=elsewhere).stdout.strip()
    assert where.startswith(str(venv)) and where.endswith("dshctl/_data/schemas/entry-list.schema.json")
    home = tmp_path / "home"
    home.mkdir()
    listed = sh(venv / "bin" / "python", "-m", "dshctl", "--home", home, "preset", "list", "--format", "json",
                cwd=elsewhere).stdout
    shipped = {p["id"]: p["dir"] for p in json.loads(listed)}
    assert set(shipped) == {p.name for p in (ROOT / "presets").iterdir() if p.is_dir()}
    assert all(d.startswith(str(venv)) and "/dshctl/_data/presets/" in d for d in shipped.values())
