"""Run a few hot commands without importing typer or click (start-up time: ~50 ms CPU saved).

For a command listed in ``FAST``, ``run_fast(argv)`` parses the command line itself — root options,
group options, the command's options and arguments — from ``fast_spec.SPEC``, a table generated from
the typer declarations, and calls the command's typer-free body: the same function the typer
callback calls, with the same keyword arguments (``tests/test_cli_fastpath.py`` checks both the
table and the arguments against typer). Anything it does not understand exactly — ``--help``, an
unknown or repeated option, a value that does not convert, a missing argument, ``--`` — returns
None and typer runs the command, so messages and behaviour never differ. ``DSHCTL_FASTPATH=0``
forces typer.

To put a command on it: give the command a typer-free body ``run(state, **params) -> exit code``
(see ``cli/lint_run.py``; the typer callback calls it with ``effective(ctx, …)``), add its words and
body to ``FAST``, then regenerate the table: ``.venv/bin/python -m dshctl.cli.fastpath_gen``.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any, Optional

# command words → "module:function" of its typer-free body
FAST: dict[tuple[str, ...], str] = {
    ("lint",): "dshctl.cli.lint_run:run",
    ("preset", "list"): "dshctl.cli.preset_list_run:run",
    ("profile", "dump"): "dshctl.cli.profile_dump:run",
    ("plugin", "add"): "dshctl.cli.plugin_run:add",
    ("agent", "run"): "dshctl.cli.agent_run:run",
}


class _Decline(Exception):
    """The command line is not one the fast path handles exactly: typer takes it."""


def run_fast(args: list[str]) -> Optional[int]:
    """The exit code of the command, or None when typer must run it."""
    if os.environ.get("DSHCTL_FASTPATH") == "0":
        return None
    try:
        body, state, params = _parse(args)
    except _Decline:
        return None
    return body(state, **params)


def _parse(args: list[str]):
    from dshctl.cli.fast_spec import SPEC

    root_values, i = _parse_level(SPEC["root"], args, 0, final=False)
    words: list[str] = []
    groups: list[dict] = []
    while True:
        if i >= len(args):
            raise _Decline
        words.append(args[i])
        entry = SPEC["commands"].get(" ".join(words))
        if entry is None:
            raise _Decline
        final = "body" in entry
        values, i = _parse_level(entry, args, i + 1, final=final)
        if final:
            break
        groups.insert(0, values)  # innermost first
    state = _root_state(root_values)
    from dshctl.cli.shared import with_overrides

    # the command's own --home/--profile fold into the State its body receives, as effective() does
    state = with_overrides(state, groups, values.pop("home", None), values.pop("profile", None))
    module, _, function = entry["body"].partition(":")
    return getattr(importlib.import_module(module), function), state, values


def _root_state(values: dict):
    from dshctl.cli.shared import root_state

    return root_state(home=values["home"], profile=values["profile"], debug=values["debug"],
                      no_cache=values["no_cache"])


def _parse_level(level: dict, args: list[str], i: int, *, final: bool) -> tuple[dict, int]:
    """Options (and, for the command itself, arguments) from ``args[i:]``; stops at the first word
    of a group level (the subcommand), as click does for groups."""
    by_flag = {flag: p for p in level["options"] for flag in p["opts"] + p.get("secondary", [])}
    given: dict[str, Any] = {}
    positional: list[str] = []
    while i < len(args):
        token = args[i]
        if token == "--" or token in ("-h", "--help"):
            raise _Decline
        if token.startswith("-") and token != "-":
            flag, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
            param = by_flag.get(flag)
            if param is None or param.get("callback"):
                raise _Decline
            if param["kind"] == "flag":
                if eq:
                    raise _Decline
                value: Any = flag not in param.get("secondary", [])
            elif eq:
                value = _convert(param, inline)
            else:
                if i + 1 >= len(args) or (args[i + 1].startswith("-") and args[i + 1] != "-"):
                    raise _Decline
                i += 1
                value = _convert(param, args[i])
            _store(given, param, value)
        elif not final:
            break
        else:
            positional.append(token)
        i += 1
    values = {p["name"]: given.get(p["name"], p["default"]) for p in level["options"]}
    values.update(_arguments(level.get("arguments", []), positional))
    return values, i


def _store(given: dict, param: dict, value: Any) -> None:
    name = param["name"]
    if param.get("multiple"):
        given.setdefault(name, []).append(value)
    elif name in given:
        raise _Decline  # click keeps the last one; rare enough to leave to typer
    else:
        given[name] = value


def _arguments(specs: list[dict], positional: list[str]) -> dict:
    values: dict[str, Any] = {}
    rest = list(positional)
    for spec in specs:
        if spec["nargs"] == -1:
            taken, rest = rest, []
            if not taken and spec["required"]:
                raise _Decline
            values[spec["name"]] = [_convert(spec, t) for t in taken] if taken else spec["default"]
        else:
            if not rest:
                if spec["required"]:
                    raise _Decline
                values[spec["name"]] = spec["default"]
                continue
            values[spec["name"]] = _convert(spec, rest.pop(0))
    if rest:
        raise _Decline  # too many arguments: typer says so
    return values


def _convert(param: dict, text: str) -> Any:
    kind = param["type"]
    if kind == "str":
        return text
    if kind in ("path", "home"):
        if not text or kind == "home" and not text.strip():   # typer says what is wrong with either
            raise _Decline
        return Path(text)
    if kind in ("int", "float"):
        digits = text[1:] if kind == "int" and text.startswith("-") else text
        plain = digits.isdigit() if kind == "int" else digits.replace(".", "", 1).isdigit()
        if not plain or not digits.isascii():
            raise _Decline
        value = int(text) if kind == "int" else float(text)
        low, high = param.get("min"), param.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            raise _Decline
        return value
    raise _Decline

