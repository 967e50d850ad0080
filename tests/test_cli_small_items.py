"""The small CLI items of issue 29, each through the real command line: help that names what an
argument is, values the parser refuses with one clear line, plain tables without trailing spaces, and
a named patch file found by a directory walk."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from demo_home import copy_demo_home

DSHCTL = str(Path(sys.executable).parent / "dshctl")


def dshctl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    return subprocess.run([DSHCTL, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def one_error(proc: subprocess.CompletedProcess) -> str:
    """The error line of a refused command: exit 2, no traceback, ``dshctl: error: …`` and a hint."""
    lines = proc.stderr.rstrip("\n").splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 2 and lines[0].startswith("dshctl: error: ") and lines[1].startswith("  hint: "), \
        proc.stderr
    return lines[0]


def test_preset_new_help_says_what_it_copies_not_a_placeholder_no_argument_is_called():
    proc = dshctl("preset", "new", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "SOURCE" not in proc.stdout
    assert re.search(r"copy of the preset\s+given\s+with\s+--from", proc.stdout), proc.stdout


@pytest.mark.parametrize("argv", [("--home", "", "profile", "list"), ("profile", "list", "--home", ""),
                                  ("--home=", "lint", "."), ("plugin", "--home", " ", "list")],
                         ids=["root", "command", "equals", "group-blank"])
def test_an_empty_home_is_refused_not_taken_for_the_current_directory(tmp_path, argv):
    (tmp_path / "profiles" / "here").mkdir(parents=True)    # what `--home ''` used to read
    (tmp_path / "profiles" / "here" / "package.json").write_text('{"name": "x"}')
    error = one_error(dshctl(*argv, cwd=tmp_path))
    assert "--home" in error and "empty" in error, error


@pytest.mark.parametrize("value", ["-1", "-0.5", "nan", "inf"])
def test_host_run_for_a_negative_or_endless_time_is_refused_by_the_parser(tmp_path, value):
    proc = dshctl("--home", str(tmp_path), "host", "run", "--for", value)
    error = one_error(proc)
    assert "--for" in error and value in error, error
    assert "host/booting" not in proc.stdout + proc.stderr   # refused before anything started


def test_host_run_for_zero_seconds_is_still_a_check_run(tmp_path):
    proc = dshctl("--home", str(tmp_path), "host", "run", "--for", "0")
    assert "Invalid value" not in proc.stderr and "host/booting" in proc.stdout + proc.stderr


@pytest.mark.parametrize("argv", [("plugin", "list"), ("schema", "list"), ("profile", "list"),
                                  ("preset", "list")], ids=lambda a: " ".join(a))
def test_plain_tables_have_no_trailing_spaces(tmp_path, argv):
    home = copy_demo_home(tmp_path / "home")
    proc = dshctl("--home", str(home), *argv)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) >= 2, proc.stdout
    assert [line for line in lines if line != line.rstrip()] == []


def test_a_named_patch_file_is_found_by_a_directory_walk(tmp_path):
    for name in ("ok.cordis.patch.yml", "cordis.patch.yml", "notes.yml"):
        (tmp_path / name).write_text("- id: [\n")
    proc = dshctl("lint", "-f", "json", str(tmp_path))
    import json
    found = sorted(Path(f["file"]).name for f in json.loads(proc.stdout)["findings"])
    assert proc.returncode == 1 and found == ["cordis.patch.yml", "ok.cordis.patch.yml"], proc.stdout
