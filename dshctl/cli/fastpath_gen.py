"""Build the fast path's table (``cli/fast_spec.py``) from the typer declarations.

Only what the fast parser reproduces exactly goes in; a parameter it could not (an environment
variable default, a counter, a path that must exist, a type it does not know…) is an error here, so
the command stays on typer rather than behaving differently.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import typer.main

from dshctl.cli.common import HomePath
from dshctl.cli.fastpath import FAST

SPEC_FILE = Path(__file__).with_name("fast_spec.py")
_UNSET = getattr(click.core, "UNSET", object())  # click >= 8.3: "no value given"


def build_spec() -> dict:
    from dshctl.cli.app import build_app

    root = typer.main.get_command(build_app(rich_help=False))
    ctx = click.Context(root)
    spec: dict[str, Any] = {"root": _level(root), "commands": {}}
    for words, body in FAST.items():
        command: click.Command = root
        for n, word in enumerate(words):
            command = command.get_command(ctx, word)
            if command is None:
                raise ValueError(f"fast path: no command {' '.join(words[:n + 1])!r}")
            key = " ".join(words[:n + 1])
            level = _level(command)
            if n + 1 < len(words):
                extra = {p["name"] for p in level["options"]} - {"home", "profile"}
                if extra or level["arguments"]:
                    raise ValueError(f"fast path: group {key!r} takes {sorted(extra)}; only --home/--profile")
                del level["arguments"]
            else:
                level["body"] = body
            spec["commands"].setdefault(key, level)
    return spec


def _level(command: click.Command) -> dict:
    options, arguments = [], []
    for param in command.params:
        (arguments if isinstance(param, click.Argument) else options).append(_param(command, param))
    if sum(a["nargs"] == -1 for a in arguments) > 1 or any(
            a["nargs"] == -1 for a in arguments[:-1]):
        raise ValueError(f"fast path: {command.name}: a variadic argument must come last")
    return {"options": options, "arguments": arguments}


def _param(command: click.Command, param: click.Parameter) -> dict:
    where = f"{command.name} {param.name}"
    if param.envvar or getattr(param, "count", False) or param.nargs not in (1, -1):
        raise ValueError(f"fast path: {where}: envvar, count or nargs is not supported")
    out: dict[str, Any] = {"name": param.name, "required": bool(param.required)}
    if param.callback is not None:
        out["callback"] = True  # e.g. --version: given → typer runs it
    if isinstance(param, click.Argument):
        out.update(kind="argument", nargs=param.nargs, type=_type(where, param.type),
                   default=_default(param))
        return out
    assert isinstance(param, click.Option)
    out.update(opts=list(param.opts), multiple=bool(param.multiple))
    if param.is_flag:
        # A plain on/off flag: click 8.5 leaves flag_value unset for those, older versions say True.
        if not isinstance(param.type, click.types.BoolParamType) or param.flag_value not in (True, _UNSET) or param.multiple:
            raise ValueError(f"fast path: {where}: only on/off flags are supported")
        out.update(kind="flag", secondary=list(param.secondary_opts), default=bool(param.default))
    else:
        out.update(kind="option", nargs=1, type=_type(where, param.type), default=_default(param))
        out.update(_bounds(param.type))
    return out


def _type(where: str, kind: click.ParamType) -> str:
    if isinstance(kind, click.Path):
        plain = (not kind.exists and kind.file_okay and kind.dir_okay and not kind.writable
                 and not kind.executable and not kind.resolve_path and not kind.allow_dash
                 and kind.type is None)
        if not plain:
            raise ValueError(f"fast path: {where}: only a plain Path is supported")
        return "home" if isinstance(kind, HomePath) else "path"   # --home also refuses a blank value
    if isinstance(kind, click.types.IntParamType):
        return "int"
    if isinstance(kind, click.types.FloatParamType):
        return "float"
    if isinstance(kind, click.types.StringParamType):
        return "str"
    raise ValueError(f"fast path: {where}: type {kind!r} is not supported")


def _bounds(kind: click.ParamType) -> dict:
    if isinstance(kind, click.types._NumberRangeBase):
        if kind.min_open or kind.max_open or kind.clamp:
            raise ValueError("fast path: open or clamped ranges are not supported")
        return {"min": kind.min, "max": kind.max}
    return {}


def _default(param: click.Parameter) -> Any:
    default = param.default
    if callable(default):
        raise ValueError(f"fast path: {param.name}: a computed default is not supported")
    if isinstance(default, (list, tuple)):
        return list(default) or None
    if default is not None and not isinstance(default, (str, int, float, bool)):
        raise ValueError(f"fast path: {param.name}: default {default!r} is not supported")
    return default


def render_spec(spec: dict) -> str:
    return ('"""The fast path\'s table of root, group and command parameters (cli/fastpath.py).\n\n'
            "Generated from the typer declarations by `python -m dshctl.cli.fastpath_gen`; do not edit.\n"
            '"""\n'
            f"SPEC = {_rendered(spec, 0)}\n")


def _rendered(value: Any, depth: int) -> str:
    """Mappings and lists that hold parameters one entry a line, each parameter (a mapping of plain
    values) on one line of its own: the table reads as one row per parameter, sorted, so a
    regenerated file differs only where a declaration changed."""
    pad, inner = "    " * depth, "    " * (depth + 1)
    if isinstance(value, dict) and any(_holds_mappings(v) for v in value.values()):
        items = [f"{inner}{k!r}: {_rendered(v, depth + 1)}," for k, v in sorted(value.items())]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        return "[\n" + "\n".join(f"{inner}{_rendered(v, depth + 1)}," for v in value) + f"\n{pad}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in sorted(value.items())) + "}"
    return repr(value)


def _holds_mappings(value: Any) -> bool:
    return isinstance(value, dict) or isinstance(value, list) and any(isinstance(v, dict) for v in value)


def write_spec() -> None:
    from dshctl.core.fsutil import atomic_write

    atomic_write(SPEC_FILE, render_spec(build_spec()))
    print(f"wrote {SPEC_FILE}")


if __name__ == "__main__":  # regenerate the table after changing FAST or a fast command's options
    write_spec()
