"""Every command's --help explains each argument and shows an example that parses."""
from __future__ import annotations

import shlex

import click
import pytest
import typer

from dshctl.cli.app import app, main

ROOT = typer.main.get_command(app)
for _name in ROOT.list_commands(None):  # the root is lazy (cli/lazy_group.py): load every group
    ROOT.get_command(None, _name)


def _commands(group=ROOT, path=()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path + (name,))
        else:
            yield path + (name,), cmd


COMMANDS = list(_commands())


def help_text(capsys, monkeypatch, path) -> str:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def examples(text: str) -> list[list[str]]:
    found = []
    for line in text.splitlines():
        line = line.strip(" │")
        if "Example" in line and "dshctl " in line:
            for part in line.split("dshctl ")[1:]:
                part = part.split("   (or:")[0].split(")")[0].split(" > ")[0].split('"')[0].strip()
                found.append(shlex.split(part))
    return found


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_explains_arguments_and_gives_an_example(capsys, monkeypatch, path, cmd):
    text = help_text(capsys, monkeypatch, path)
    for param in cmd.params:
        if isinstance(param, click.Argument):
            assert param.help, f"{' '.join(path)}: argument {param.name} has no help"
            assert param.help.split()[0] in text
    found = examples(text)
    assert found, f"{' '.join(path)} --help shows no example"
    for argv in found:
        assert _resolves_to(argv) == path, argv


def _resolves_to(argv: list[str]) -> tuple[str, ...]:
    """Parse ``argv`` as click would (no command runs) and return the command path it reaches."""
    ctx = ROOT.make_context("dshctl", list(argv), resilient_parsing=False)
    path, group = [], ROOT
    while isinstance(group, click.Group):
        import warnings

        with warnings.catch_warnings():  # click 8.2+ keeps every token in args; older in protected_args
            warnings.simplefilter("ignore", DeprecationWarning)
            tokens = list(getattr(ctx, "protected_args", [])) + ctx.args
        name, cmd, rest = group.resolve_command(ctx, tokens)
        path.append(name)
        ctx = cmd.make_context(name, rest, parent=ctx)
        group = cmd
    return tuple(path)
