"""`dshctl completion`: the bash script, sourced into a real bash, completes commands, options,
profile names, row ids and preset ids through COMP_WORDS / COMP_CWORD as bash itself would."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from demo_home import copy_demo_home

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DSHCTL = BIN / "dshctl"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("c") / "home"
    copy_demo_home(home)
    shutil.copytree(home / "profiles" / "web", home / "profiles" / "work")
    return home


def complete(words: list[str], env: dict | None = None) -> list[str]:
    """Source the script into bash, set COMP_WORDS/COMP_CWORD for ``words`` (the last one being
    typed) and run the completion function bash would; the COMPREPLY it leaves."""
    script = subprocess.run([str(DSHCTL), "completion", "bash"], capture_output=True, text=True,
                            timeout=60, check=True).stdout
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    program = (f"{script}\nCOMP_WORDS=({quoted})\nCOMP_CWORD={len(words) - 1}\n"
               "_dshctl_completion dshctl\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_commands_and_subcommands():
    assert "profile" in complete(["dshctl", ""]) and "completion" in complete(["dshctl", ""])
    assert complete(["dshctl", "pro"]) == ["profile"]
    assert complete(["dshctl", "profile", "di"]) == ["diff", "disable"]


def test_options():
    assert complete(["dshctl", "lint", "--st"]) == ["--strict", "--stdin-filename"]


def test_profile_names_from_the_home_on_the_line(home):
    assert complete(["dshctl", "--home", str(home), "--profile", ""]) == ["web", "work"]
    assert complete(["dshctl", "--home", str(home), "plugin", "-p", "w"]) == ["web", "work"]
    # the default home ($DSH_HOME) when the line names none
    assert complete(["dshctl", "-p", "wo"], env={"DSH_HOME": str(home)}) == ["work"]


def test_row_ids_of_the_composed_profile(home):
    got = complete(["dshctl", "--home", str(home), "profile", "disable", ""])
    assert {"logger", "http", "greeter", "echo-upper"} <= set(got)
    assert complete(["dshctl", "--home", str(home), "profile", "set", "ht"]) == ["http"]


def test_preset_ids(home):
    assert complete(["dshctl", "--home", str(home), "preset", "show", ""]) == ["standard", "minimal", "reviewer"]
    assert complete(["dshctl", "--home", str(home), "preset", "path", "re"]) == ["reviewer"]


def test_a_broken_home_completes_nothing_and_never_errors(tmp_path):
    assert complete(["dshctl", "--home", str(tmp_path / "none"), "profile", "disable", ""]) == []


@pytest.mark.parametrize("shell,marker", [("zsh", "#compdef dshctl"), ("fish", "complete --no-files --command dshctl")])
def test_zsh_and_fish_scripts(shell, marker):
    proc = subprocess.run([str(DSHCTL), "completion", shell], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and marker in proc.stdout and "_DSHCTL_COMPLETE" in proc.stdout


def test_unknown_shell_is_a_usage_error():
    proc = subprocess.run([str(DSHCTL), "completion", "tcsh"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["dshctl: error: unknown shell 'tcsh'",
                                        "  hint: choose one of: bash, zsh, fish"]


def test_plugin_remove_completes_the_profiles_dependencies(home):
    manifest = json.loads((home / "profiles" / "web" / "package.json").read_text())
    got = complete(["dshctl", "--home", str(home), "plugin", "remove", ""])
    assert got == sorted(manifest["dependencies"]) and got
    assert complete(["dshctl", "--home", str(home), "plugin", "remove", "@demo/g"]) == ["@demo/greeter"]


def test_session_show_completes_the_homes_session_ids(tmp_path):
    from dshctl.agents.session.api import SessionStore
    from tests.agents.session_helpers import write_turn

    home = tmp_path / "sessions-home"
    store = SessionStore(home)
    for n, sid in enumerate(("1111aaaa-0000-4000-8000-000000000001", "2222bbbb-0000-4000-8000-000000000002")):
        log = store.create(cwd="/w", session_id=sid, created_at=1_000 * (n + 1))
        write_turn(log, 1, "hi")
        log.close()
    assert sorted(complete(["dshctl", "--home", str(home), "session", "show", ""])) == \
        ["1111aaaa-0000-4000-8000-000000000001", "2222bbbb-0000-4000-8000-000000000002"]
    assert complete(["dshctl", "--home", str(home), "session", "export", "22"]) == \
        ["2222bbbb-0000-4000-8000-000000000002"]


def test_preset_option_completes_preset_ids(home):
    got = complete(["dshctl", "--home", str(home), "agent", "run", "--preset", ""])
    assert "reviewer" in got
    assert got == complete(["dshctl", "--home", str(home), "preset", "show", ""])


def test_profile_diff_completes_profile_names(home):
    assert complete(["dshctl", "--home", str(home), "profile", "diff", ""]) == ["web", "work"]
    assert complete(["dshctl", "--home", str(home), "profile", "diff", "web", "wo"]) == ["work"]
