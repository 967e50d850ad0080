"""CLI conventions (docs/cli.md) across every command group: one error line plus a hint, exit codes
0/1/2/3, tracebacks only with --debug, plain output when piped or NO_COLOR, --version."""
from __future__ import annotations

import importlib
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl import __version__
from dshctl.cli.app import main
from demo_home import copy_demo_home

ROOT = Path(__file__).resolve().parents[1]
DEMO_HOME = ROOT / "examples" / "home"
DSHCTL = Path(sys.executable).parent / "dshctl"
ANSI = re.compile(r"\x1b\[")


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exit_.value.code, out, err


def assert_one_error_line(err: str, *, contains: str = "") -> None:
    """The last two stderr lines are the error and its hint; no traceback anywhere."""
    lines = err.rstrip("\n").splitlines()
    assert "Traceback" not in err
    assert len(lines) >= 2, err
    error, hint = lines[-2], lines[-1]
    assert error.startswith("dshctl: error: ") and hint.startswith("  hint: "), err
    assert contains in error, err


@pytest.fixture
def empty_home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def demo_home(tmp_path) -> Path:
    home = tmp_path / "demo"
    copy_demo_home(home)
    return home


# -- failures the user can fix: exit 1, one line naming the thing, then a hint ---------------------

def test_profile_missing_manifest(capsys, empty_home):
    code, out, err = run_main(capsys, "--home", empty_home, "profile", "dump")
    assert code == 1 and out == ""
    assert_one_error_line(err, contains=str(empty_home / "profiles" / "web" / "package.json"))


def test_profile_bad_yaml_names_file_line_col(capsys, demo_home):
    patch = demo_home / "cordis.patch.yml"
    patch.write_text("- id: greeter\n  disabled: true\n  disabled: false\n")
    code, _, err = run_main(capsys, "--home", demo_home, "profile", "dump")
    assert code == 1
    assert_one_error_line(err, contains=f"dshctl: error: {patch}:3:3: ")
    assert "duplicated mapping key" in err


def test_preset_unknown_id(capsys, demo_home):
    code, _, err = run_main(capsys, "--home", demo_home, "preset", "show", "no-such-preset")
    assert code == 1
    assert_one_error_line(err, contains="no-such-preset")


def test_plugin_add_from_a_missing_repository(capsys, demo_home, tmp_path):
    code, _, err = run_main(capsys, "--home", demo_home, "plugin", "add", tmp_path / "not-a-repo")
    assert code == 1
    assert_one_error_line(err, contains="not-a-repo")


def test_lint_missing_path(capsys, tmp_path):
    code, _, err = run_main(capsys, "lint", tmp_path / "absent.yml")
    assert code == 1
    assert_one_error_line(err, contains=str(tmp_path / "absent.yml"))


def test_lint_findings_exit_1_with_position(capsys, tmp_path):
    bad = tmp_path / "cordis.yml"
    bad.write_text("- name: a\n  name: b\n")
    code, out, _ = run_main(capsys, "lint", "--format", "text", bad)
    assert code == 1
    assert out.startswith(f"{bad}:2:3: error [parse] duplicated mapping key")


def test_host_run_missing_profile(capsys, empty_home):
    code, _, err = run_main(capsys, "--home", empty_home, "host", "run", "--for", "1")
    assert code == 1
    assert_one_error_line(err, contains="package.json")


def test_schema_unknown_name_is_usage(capsys):
    code, out, err = run_main(capsys, "schema", "show", "nope")
    assert code == 2 and out == ""
    assert_one_error_line(err, contains="unknown schema 'nope'")


# -- usage errors: exit 2, same one-line shape, for every group ------------------------------------

@pytest.mark.parametrize("args,contains", [
    (["no-such-group"], "No such command 'no-such-group'"),
    (["profile", "dump", "--format", "xml"], "unknown format 'xml'"),
    (["profile", "frobnicate"], "No such command 'frobnicate'"),
    (["preset", "list", "--format", "xml"], "unknown format 'xml'"),
    (["plugin", "add"], "Missing argument"),
    (["plugin", "list", "--format", "xml"], "unknown format 'xml'"),
    (["lint", "--format", "xml", "."], "unknown format 'xml'"),
    (["lint", "--no-such-option"], "No such option"),
    (["schema", "path"], "Missing argument 'NAME'"),
    (["schema", "list", "--format", "xml"], "unknown format 'xml'"),
    (["host", "run", "--log-format", "xml"], "unknown format 'xml'"),
    (["host", "stop"], "No such command 'stop'"),
    (["--profile"], "requires an argument"),
])
def test_usage_errors_exit_2_with_one_line(capsys, demo_home, args, contains):
    code, out, err = run_main(capsys, "--home", demo_home, *args)
    assert code == 2 and out == ""
    assert_one_error_line(err, contains=contains)
    assert "Usage:" not in err


def test_usage_hint_names_the_subcommand(capsys):
    _, _, err = run_main(capsys, "profile", "frobnicate")
    assert err.splitlines()[-1] == "  hint: run 'dshctl profile --help' for usage"


# -- internal errors: exit 3, one line, traceback only with --debug --------------------------------

# One service function per group, replaced by one that fails like a bug would (fault injection).
FAULTS = {
    "profile": ("dshctl.core.compose.composition", "compose_profile", ["profile", "dump"]),
    "preset": ("dshctl.core.presets", "discover", ["preset", "list"]),
    "plugin": ("dshctl.bundles.query", "list_packages", ["plugin", "list"]),
    "lint": ("dshctl.lint.parallel", "run_cached", ["lint", str(DEMO_HOME)]),
    "schema": ("dshctl.core.schemas", "load_schema", ["schema", "list"]),
    "host": ("dshctl.host.runner", "run_host", ["host", "run", "--for", "1"]),
}


def _inject_fault(monkeypatch, group: str) -> list[str]:
    module, attr, args = FAULTS[group]

    def broken(*_a, **_k):
        raise RuntimeError(f"injected fault in {group}")

    monkeypatch.setattr(importlib.import_module(module), attr, broken)
    return args


@pytest.mark.parametrize("group", sorted(FAULTS))
def test_internal_error_exit_3_without_traceback(capsys, monkeypatch, demo_home, group):
    args = _inject_fault(monkeypatch, group)
    code, _, err = run_main(capsys, "--home", demo_home, *args)
    assert code == 3
    assert "Traceback" not in err
    lines = err.rstrip("\n").splitlines()
    assert lines[-2] == f"dshctl: internal error: RuntimeError: injected fault in {group}"
    assert lines[-1].startswith("  hint: run again with --debug")


@pytest.mark.parametrize("group", sorted(FAULTS))
def test_debug_shows_the_traceback(capsys, monkeypatch, demo_home, group):
    args = _inject_fault(monkeypatch, group)
    code, _, err = run_main(capsys, "--debug", "--home", demo_home, *args)
    assert code == 3
    assert "Traceback (most recent call last)" in err and f"injected fault in {group}" in err


def test_debug_shows_the_traceback_of_a_user_error_too(capsys, empty_home):
    code, _, err = run_main(capsys, "--debug", "--home", empty_home, "profile", "dump")
    assert code == 1 and "Traceback (most recent call last)" in err
    assert_one_error_line(err[err.rindex("dshctl: error"):], contains="package.json")


# -- success, --version, output styling ------------------------------------------------------------

def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without the variables that force or forbid colour, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS", "FORCE_COLOR")}
    return env | extra


def _subprocess(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DSHCTL), *args], capture_output=True, text=True, env=clean_env(), timeout=60)


def test_version_and_success_exit_0():
    proc = _subprocess("--version")
    assert proc.returncode == 0 and proc.stdout == f"dshctl {__version__}\n"
    proc = _subprocess("--home", str(DEMO_HOME), "preset", "list", "--format", "json")
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)[0]["id"] == "standard"


def test_piped_output_is_plain():
    for args in (["--help"], ["--home", str(DEMO_HOME), "preset", "list"], ["schema", "list"],
                 ["--home", str(DEMO_HOME), "profile", "list"]):
        proc = _subprocess(*args)
        assert proc.returncode == 0, proc.stderr
        assert not ANSI.search(proc.stdout), args


def _on_a_terminal(args: list[str], env: dict) -> bytes:
    """Run dshctl with stdout on a pseudo-terminal; return what it wrote there."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([str(DSHCTL), *args], stdout=slave, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env=clean_env(**env))
        os.close(slave)
        drawn = read_terminal(master)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
    return drawn


def read_terminal(master: int) -> bytes:
    """Everything written to a pseudo-terminal until the child closes it."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


@pytest.mark.parametrize("args", [["--home", str(DEMO_HOME), "preset", "list"], ["--help"]])
def test_terminal_is_rich_unless_no_color(args):
    assert b"\x1b[" in _on_a_terminal(args, {})
    plain = _on_a_terminal(args, {"NO_COLOR": "1"})
    assert b"\x1b[" not in plain
    assert (b"standard" in plain) if "preset" in args else (b"Usage" in plain)


# -- start-up: a command module is imported only when its command runs (budgets: tests/test_cli_lazy.py),
# and none of them may import heavy modules at import time, so `dshctl lint --help` stays cheap too --

HEAVY = ("ruamel", "jsonschema", "referencing", "asyncio", "watchfiles", "packaging", "dshctl.core.yaml.dialect",
         "dshctl.lint", "dshctl.report", "dshctl.bundles", "dshctl.runtime", "dshctl.loader", "dshctl.host",
         "pygls", "lsprotocol", "dshctl.lsp", "dshctl.fleet", "httpx")


def test_command_modules_import_no_heavy_module():
    code = ("import importlib, sys\n"
            "from dshctl.cli.app import COMMANDS\n"
            "for module, _ in COMMANDS.values(): importlib.import_module('dshctl.cli.' + module)\n"
            f"heavy = {HEAVY!r}\n"
            "print(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


# -- --home and --profile defaults ------------------------------------------------------------------

@pytest.mark.parametrize("env_home,expected", [("set", "{dsh_home}"), ("", "{home}/.dsh"), (None, "{home}/.dsh")])
def test_home_defaults_to_dsh_home_then_dot_dsh(tmp_path, env_home, expected):
    dsh_home, home = tmp_path / "dsh-home", tmp_path / "user"
    env = {"HOME": str(home)}
    if env_home is not None:
        env["DSH_HOME"] = str(dsh_home) if env_home else "  "
    full_env = {k: v for k, v in clean_env(**env).items() if env_home is not None or k != "DSH_HOME"}
    proc = subprocess.run([str(DSHCTL), "profile", "dump"], capture_output=True, text=True, env=full_env,
                          timeout=60)
    where = Path(expected.format(dsh_home=dsh_home, home=home)) / "profiles" / "web" / "package.json"
    assert proc.returncode == 1 and proc.stderr.startswith(f"dshctl: error: {where}: ")


@pytest.mark.parametrize("args", [["--profile", "work", "profile", "dump"], ["-p", "work", "profile", "dump"],
                                  ["profile", "dump", "--profile", "work"]])
def test_profile_option_before_or_after_the_command(capsys, empty_home, args):
    code, _, err = run_main(capsys, "--home", empty_home, *args)
    assert code == 1 and f"{empty_home / 'profiles' / 'work' / 'package.json'}: " in err


def test_help_shows_every_group(capsys):
    code, out, _ = run_main(capsys, "--help")
    listed = {m.group(1) for m in re.finditer(r"^\W*(\w+)\s{2,}\S", out, re.MULTILINE)}
    assert code == 0 and {"profile", "preset", "plugin", "host", "schema", "lint"} <= listed


# -- small things: nothing left behind, hints that can be pasted back --------------------------------

FAILING_ON_A_MISSING_HOME = [
    ("profile", "disable", "x"), ("profile", "set", "x.config.a", "1"), ("profile", "unset", "x.config.a"),
    ("profile", "enable", "x"), ("profile", "dump"), ("plugin", "remove", "x"),
    ("plugin", "add", "file:///nonexistent/repo.git"), ("preset", "new", "p", "--from", "nothing"),
    ("status",), ("reload",), ("profile", "explain", "x"), ("host", "run", "--for", "1"),
]


@pytest.mark.parametrize("args", FAILING_ON_A_MISSING_HOME, ids=" ".join)
def test_a_failed_command_on_a_missing_home_creates_nothing(capsys, tmp_path, args):
    home = tmp_path / "nohome"
    code, _, err = run_main(capsys, "--home", str(home), *args)
    assert code != 0 and "Traceback" not in err
    assert not home.exists()


def test_hints_name_dshctl_and_repeat_the_home_and_profile_given(capsys, tmp_path):
    home = tmp_path / "my home"
    (home / "profiles").mkdir(parents=True)
    code, _, err = run_main(capsys, "--home", str(home), "profile", "dump", "--profile", "dev")
    quoted = f"'{home}'"
    assert code == 1
    assert err.splitlines() == [
        f"dshctl: error: {home}/profiles/dev/package.json: profile \"dev\" does not exist; create it with "
        f"'dshctl --home {quoted} plugin --profile dev add <package>'",
        f"  hint: or run: dshctl --home {quoted} --profile dev profile init dev"]
    code, _, err = run_main(capsys, "-p", "dev", "--home", str(home), "status")
    assert code == 6 and err.splitlines()[-1] == f"  hint: start one with `dshctl --home {quoted} --profile dev host run`"
    # without --home/--profile on the command line the hint stays as it was
    code, _, err = run_main(capsys, "lint", str(tmp_path / "missing.yml"))
    assert err.splitlines()[-1] == "  hint: pass files or directories that exist"


def test_no_hint_in_the_sources_tells_the_user_to_run_dsh():
    """dshctl's messages suggest dshctl commands; `dsh <command>` would send users to another tool."""
    offenders = []
    for path in (ROOT / "dshctl").rglob("*.py"):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"""['"`]dsh (plugin|profile|preset|host|lint|schema|reload|status)\b""", line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []
