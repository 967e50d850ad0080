"""The typer-free fast path (cli/fastpath.py): its table matches the typer declarations, it hands a
command's body exactly what typer hands it, it leaves everything else to typer, and it imports
neither typer nor click."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.cli import fastpath
from dshctl.cli.app import _run
from dshctl.cli.fast_spec import SPEC
from dshctl.cli.fastpath_gen import SPEC_FILE, build_spec, render_spec

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_is_what_the_typer_declarations_generate():
    assert SPEC_FILE.read_text(encoding="utf-8") == render_spec(build_spec()), (
        "cli/fast_spec.py is stale: run .venv/bin/python -m dshctl.cli.fastpath_gen")


def test_every_fast_command_names_a_body_that_exists():
    for words, body in fastpath.FAST.items():
        entry = SPEC["commands"][" ".join(words)]
        assert entry["body"] == body
        module, _, function = body.partition(":")
        assert callable(getattr(__import__(module, fromlist=[function]), function))


# --- the same call through both paths -------------------------------------------------------------

_WORD = st.text(st.characters(codec="utf-8", exclude_characters="\x00", exclude_categories=("Cs",)),
                min_size=1, max_size=8).filter(lambda t: not t.startswith("-"))


def _value(param: dict):
    kind = param["type"]
    if kind == "int":
        return st.integers(param.get("min") or 0, param.get("max") or 10_000).map(str)
    if kind == "float":
        return st.floats(param.get("min") or 0, param.get("max") or 1e6).map(lambda f: f"{f:.3f}")
    if kind == "home":      # a blank --home is not well formed (typer refuses it)
        return _WORD.filter(str.strip)
    return _WORD


@st.composite
def _level_tokens(draw, level: dict) -> list[str]:
    tokens: list[str] = []
    usable = [p for p in level["options"] if not p.get("callback")]
    for param in draw(st.lists(st.sampled_from(usable), unique_by=lambda p: p["name"])) if usable else []:
        count = draw(st.integers(1, 3)) if param.get("multiple") else 1
        for _ in range(count):
            flag = draw(st.sampled_from(param["opts"] + param.get("secondary", [])))
            if param["kind"] == "flag":
                tokens.append(flag)
            elif flag.startswith("--") and draw(st.booleans()):
                tokens.append(f"{flag}={draw(_value(param))}")
            else:
                tokens += [flag, draw(_value(param))]
    return tokens


@st.composite
def _command_lines(draw) -> list[str]:
    words = draw(st.sampled_from(sorted(fastpath.FAST)))
    args = draw(_level_tokens(SPEC["root"]))
    for n in range(1, len(words) + 1):
        entry = SPEC["commands"][" ".join(words[:n])]
        args.append(words[n - 1])
        options = draw(_level_tokens(entry))
        if n == len(words):
            arguments = entry.get("arguments", [])
            positional = []
            for spec in arguments:
                many = spec["nargs"] == -1
                low = 1 if spec["required"] else 0
                positional += draw(st.lists(st.one_of(_WORD, st.just("-")), min_size=low,
                                            max_size=3 if many else 1))
            # options and arguments interleave at the command level, as click allows
            cut = draw(st.integers(0, len(options)))
            while cut < len(options) and options[cut - 1:cut] and not options[cut].startswith("-"):
                cut += 1
            options = options[:cut] + positional + options[cut:]
        args += options
    return args


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=_command_lines())
def test_the_body_receives_what_typer_would_hand_it(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = fastpath._parse(args)  # a well-formed command line is never declined
    body, state, params = got
    seen = []
    module, _, function = fastpath.FAST[_words_of(args)].partition(":")
    monkeypatch.setattr(sys.modules[module], function, lambda st_, **kw: seen.append((st_, kw)) or 0)
    monkeypatch.setenv("DSHCTL_FASTPATH", "0")
    assert _run(list(args)) == 0
    assert seen == [(state, params)]


def _words_of(args: list[str]) -> tuple[str, ...]:
    """The command's words: the first bare tokens, skipping option values (in `profile dump --patch
    lint` the command is `profile dump`, not `lint`)."""
    takes_value = {flag for level in [SPEC["root"], *SPEC["commands"].values()] for p in level["options"]
                   if p["kind"] != "flag" for flag in p["opts"]}
    bare, skip = [], False
    for token in args:
        if skip:
            skip = False
        elif token in takes_value:
            skip = True
        elif not token.startswith("-"):
            bare.append(token)
    for words in sorted(fastpath.FAST, key=len, reverse=True):
        if tuple(bare[:len(words)]) == words:
            return words
    raise AssertionError(args)


@pytest.mark.parametrize("args", [
    ["lint", "--help"], ["lint", "-h", "x"], ["--version", "lint", "x"], ["lint", "--", "-x"],
    ["lint", "--bogus", "x"], ["lint", "-j", "0", "x"], ["lint", "-j", "abc", "x"], ["lint", "-j4", "x"],
    ["lint", "--format"], ["lint", "--format", "--strict", "x"], ["lint", "--strict=yes", "x"],
    ["lint", "--select", "a", "--select", "b", "x"], ["lint", "--config", "", "x"],
    ["--home"], ["nosuchcommand", "x"], [], ["lint", "-j", "١", "x"],
])
def test_what_it_does_not_understand_exactly_goes_to_typer(args):
    with pytest.raises(fastpath._Decline):
        fastpath._parse(args)


@pytest.mark.parametrize("args", [
    ["lint", "-j", "0", "x"], ["lint", "--bogus"], ["lint", "nonexistent.yml"], ["lint"],
    ["lint", "--format", "nope", "x"], ["--home", "/dev/null", "lint", "x"],
])
def test_messages_and_exit_codes_are_typers_own(args, tmp_path):
    def run(fast: str):
        env = dict(os.environ, DSHCTL_FASTPATH=fast)
        return subprocess.run([sys.executable, "-m", "dshctl", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)

    fast, slow = run("1"), run("0")
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.returncode in (1, 2)


def test_a_fast_command_imports_neither_typer_nor_click(tmp_path):
    good = tmp_path / "cordis.yml"
    good.write_text("- id: a\n  name: x\n", encoding="utf-8")
    code = ("import sys\nfrom dshctl.cli.app import _run\n"
            f"rc = _run(['--no-cache', 'lint', {str(good)!r}])\n"
            "print(rc, sorted(m for m in ('typer', 'click', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, DSHCTL_FASTPATH="1"))
    assert out.stdout.split("\n")[-2] == "0 []", out.stdout + out.stderr


# --- any command line: the fast path and typer print the same -----------------------------------

def _any_token():
    flags = sorted({flag for level in [SPEC["root"], *SPEC["commands"].values()]
                    for p in level["options"] for flag in p["opts"] + p.get("secondary", [])})
    words = sorted({w for words in fastpath.FAST for w in words})
    return st.one_of(
        st.sampled_from(flags), st.sampled_from(words),
        st.builds(lambda f, v: f"{f}={v}", st.sampled_from(flags), _WORD),
        st.sampled_from(["-", "--", "-h", "-j4", "0", "-1", "3.5", "x.yml", "", "--nope", "-Z"]),
        _WORD)


@st.composite
def _any_command_line(draw) -> list[str]:
    words = list(draw(st.sampled_from(sorted(fastpath.FAST))))
    tokens = draw(st.lists(_any_token(), max_size=7))
    for word in reversed(words):  # the command's words somewhere, in order
        tokens.insert(draw(st.integers(0, len(tokens))), word)
    return tokens


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=_any_command_line())
def test_any_command_line_prints_the_same_with_and_without_the_fast_path(args, tmp_path, monkeypatch,
                                                                       capfd):
    """Random tokens around a fast command's words, run in-process both ways from the same empty
    directory: the same stdout, stderr and exit code, and never an internal error."""
    import shutil

    monkeypatch.setenv("DSHCTL_CACHE", "0")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "w" / "home"))
    seen = []
    for fast in ("1", "0"):
        work = tmp_path / "w"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        monkeypatch.chdir(work)
        monkeypatch.setenv("DSHCTL_FASTPATH", fast)
        code = _run(list(args))
        out = capfd.readouterr()
        seen.append((code, out.out, out.err))
    assert seen[0] == seen[1]
    assert seen[0][0] != 3, seen[0]
