"""CLI fuzz (issue 14): argv generated from the typer app's own command tree never ends in exit 3 or a
traceback, whatever the options and values.

Commands, options and arguments come from click's view of `dshctl.cli.app.app`, so a new command is
fuzzed without touching this file. Values are drawn from a pool of hostile text (huge numbers, lone
surrogates, over-long names, NUL-free control characters, paths to a file, a FIFO, a loop, a directory)
plus the option's own choices. `host run` always gets `--for 0` so a generated boot cannot run forever.
"""
from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.cli.app import app, main
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = 200   # ~0.1 s each: every example runs the real command (about 20 s on a loaded CI machine)


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    if isinstance(command, click.Group):
        out = [(path, command)]
        for name, sub in sorted(command.commands.items()):
            out += _commands(sub, path + (name,))
        return out
    return [(path, command)]


ROOT = typer.main.get_command(app)
for _name in ROOT.list_commands(None):  # the root is lazy (cli/lazy_group.py): load every group
    ROOT.get_command(None, _name)
COMMANDS = [(p, c) for p, c in _commands(ROOT) if p]


@pytest.fixture(scope="module")
def playground(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fuzz")
    home = base / "home"
    copy_demo_home(home)
    (base / "file.yml").write_text("- id: x\n  name: y\n")
    (base / "bad.yml").write_bytes(b"- id: \xff\n")
    os.mkfifo(base / "fifo.yml")
    os.symlink(base / "loop-b", base / "loop-a")
    os.symlink(base / "loop-a", base / "loop-b")
    return {"home": home, "base": base}


def _values(places: dict[str, Path]) -> st.SearchStrategy[str]:
    base = places["base"]
    return st.sampled_from([
        "", "-", "--", "0", "-1", "1e400", "9" * 5000, "0x" + "f" * 300, "nan", "true", "null",
        "web", "work", "http", "http.config.port", "http..port", "http.config", ".", "..", "node_modules",
        "a" * 300, "x/" * 2100, "\udcff", "\ud800", "é", "{a: 1}", "[1, 2]", "!!js 1 +", "!!int 1x",
        "text", "json", "sarif", "rich", str(base / "file.yml"), str(base / "bad.yml"), str(base / "fifo.yml"),
        str(base / "loop-a"), str(base), "/dev/null", "/nonexistent/x", "\t", "a\nb",
    ]) | st.text(max_size=20).filter(lambda s: "\0" not in s)


@st.composite
def argvs(draw, places):
    path, command = draw(st.sampled_from(COMMANDS))
    values = _values(places)
    argv = ["--home", str(places["home"])] if draw(st.booleans()) else []
    argv += list(path)
    params = [p for p in command.params if p.name not in ("help",)]
    for _ in range(draw(st.integers(0, 4))):
        if not params:
            break
        param = draw(st.sampled_from(params))
        if isinstance(param, click.Option):
            argv.append(draw(st.sampled_from(param.opts + param.secondary_opts)))
            if not param.is_flag:
                choices = list(getattr(param.type, "choices", []) or [])
                argv.append(draw(st.sampled_from(choices) if choices and draw(st.booleans()) else values))
        else:
            argv.append(draw(values))
    if draw(st.booleans()):
        argv.append(draw(values))   # a stray extra argument
    if path == ("host", "run"):   # parse everything, boot nothing (boots are tested with real hosts)
        argv += ["--for", "0", "--profile", "fuzz-none"]
    return argv


def test_generated_argv_never_ends_in_an_internal_error(playground, capfd, monkeypatch):
    monkeypatch.chdir(playground["base"])   # relative paths the fuzzer makes up land in the playground
    @settings(max_examples=EXAMPLES, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(argvs(playground))
    def check(argv):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        out, err = capfd.readouterr()
        assert exit_info.value.code != 3, (argv, err)
        assert "Traceback" not in err and "internal error" not in err, (argv, err)

    check()


def test_the_fuzzer_reaches_every_command():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"lint", "profile dump", "profile set", "preset list", "plugin install", "host run", "reload",
            "status", "schema"} <= names | {n.split(" ")[0] for n in names}
