"""Run the same dumps with the real dsh and with dshctl, and put their outputs side by side.

The texts are compared after one normalisation each, both documented in docs/compose.md ("The real dsh
beside dshctl"):
- warnings: dsh prints ``dsh: [<layer>] <message>``; dshctl prints ``warning: [<layer>] <message>
  (<file>:<line>:<col>)`` and may add a ``  hint:`` line. The prefix, the location suffix (dshctl's
  improvement, checked to name a real position) and the hint go; the rest must be equal. dshctl's own
  ``unsupported !!js`` warnings (its Python host's limits, nothing dsh checks) are set aside.
- errors: dsh throws ``dsh: <message>`` (a YAML error adds js-yaml's source snippet on the following
  lines); dshctl prints ``dshctl: error: <file>[:<line>:<col>]: <message>`` and a hint. The first line
  of dsh's message, without ``dsh: ``, is compared with dshctl's message.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .dump_homes import Invocation
from .real_dsh import RealDsh

DRIVER = Path(__file__).with_name("dump_driver.mts")
DSHCTL_LOCATION = re.compile(r" \((?P<file>/[^()]*):(?P<line>\d+):(?P<col>\d+)\)$")
DSHCTL_ERROR = re.compile(r"^dshctl: error: (?:(?P<file>/[^:]*)(?::\d+:\d+)?: )?(?P<message>.*)$")


@dataclass
class Outcome:
    """What one tool did for one invocation, normalised for comparison."""
    ok: bool
    stdout: str
    warnings: list[str]
    error: str | None
    raw_stderr: str


def dsh_batch(real_dsh: RealDsh, invocations: list[Invocation], scratch: Path) -> list[Outcome]:
    """All invocations through dsh's own dump entry in one Node process (tests/dsh/dump_driver.mts)."""
    request = scratch / "dsh-invocations.json"
    request.write_text(json.dumps([{"home": str(i.home), "cwd": str(i.cwd), "argv": i.dsh_argv()}
                                   for i in invocations]))
    answer = scratch / "dsh-outcomes.json"
    done = real_dsh.node_script(DRIVER, str(request), str(answer), env=real_dsh.env(scratch), timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"dump_driver.mts exited {done.returncode}:\n{done.stderr[-3000:]}")
    outcomes = json.loads(answer.read_text(encoding="utf-8"))
    return [dsh_outcome(o["stdout"], o["stderr"], o["error"]) for o in outcomes]


def dsh_outcome(stdout: str, stderr: str, error: str | None) -> Outcome:
    warnings = []
    for line in stderr.splitlines():
        if not line.startswith("dsh: ["):
            raise AssertionError(f"unexpected dsh stderr line: {line!r}")
        warnings.append(line[len("dsh: "):])
    message = None
    if error is not None:
        first = error.splitlines()[0]
        message = first[len("dsh: "):] if first.startswith("dsh: ") else first
    return Outcome(error is None, stdout, warnings, message, stderr)


def dsh_cli_error(stderr: str) -> str:
    """The message of the uncaught Error a dsh CLI run printed (``Error: dsh: …`` above the stack)."""
    for line in stderr.splitlines():
        if line.startswith("Error: "):
            return line[len("Error: "):]
    raise AssertionError(f"no Error line in dsh's stderr:\n{stderr[-2000:]}")


def dshctl_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSH_")}
    env.update(DSHCTL_CACHE_DIR=str(cache), NO_COLOR="1", COLUMNS="200")
    return env


def dshctl_run(invocation: Invocation, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dshctl", *invocation.dshctl_argv()], cwd=invocation.cwd,
                          env={**env, "DSH_HOME": str(invocation.home)}, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def dshctl_batch(invocations: list[Invocation], cache: Path, *, processes: bool = False) -> list[Outcome]:
    """``dshctl profile dump`` for each invocation: through the CLI's entry point in this process (a
    process start costs ~0.15 s, the dump a few ms), or as separate processes (two at a time)."""
    env = dshctl_env(cache)
    if processes:
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(lambda inv: dshctl_run(inv, env), invocations))
    else:
        runs = [dshctl_in_process(inv, env) for inv in invocations]
    return [dshctl_outcome(run) for run in runs]


def dshctl_in_process(invocation: Invocation, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``dshctl.cli.app.main`` (what the ``dshctl`` script calls) with the invocation's DSH_HOME, cache,
    working directory, stdout and stderr; the process's own are restored afterwards."""
    from dshctl.cli.app import main

    wanted = {**env, "DSH_HOME": str(invocation.home)}
    keys = {"DSH_HOME", "DSHCTL_CACHE_DIR", "NO_COLOR", "COLUMNS"}
    saved = {k: os.environ.get(k) for k in keys}
    cwd = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update({k: wanted[k] for k in keys})
        os.chdir(invocation.cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(invocation.dshctl_argv())
                code = 0
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(invocation.dshctl_argv(), code, out.getvalue(), err.getvalue())


def dshctl_outcome(run: subprocess.CompletedProcess) -> Outcome:
    if run.returncode not in (0, 1):
        raise AssertionError(f"dshctl exited {run.returncode}:\n{run.stderr[-3000:]}")
    warnings, error = [], None
    lines = run.stderr.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("dshctl: error: "):
            error = DSHCTL_ERROR.match(line)["message"]
        elif line.startswith("warning: ["):
            warnings.append(_strip_location(line[len("warning: "):]))
        elif line.startswith("warning: /") and "unsupported !!js expression" in line:
            continue  # dshctl-only: what its Python host cannot evaluate
        elif line.startswith("  hint: ") and number > 0:
            continue
        else:
            raise AssertionError(f"unexpected dshctl stderr line: {line!r}\n{run.stderr[-2000:]}")
    if (run.returncode == 1) != (error is not None):
        raise AssertionError(f"dshctl exit {run.returncode} with stderr:\n{run.stderr[-2000:]}")
    return Outcome(run.returncode == 0, run.stdout, warnings, error, run.stderr)


def _strip_location(text: str) -> str:
    """A warning without dshctl's ``(<file>:<line>:<col>)``, after checking it names a real line."""
    match = DSHCTL_LOCATION.search(text)
    if match is None:
        return text
    lines = Path(match["file"]).read_text(encoding="utf-8-sig").splitlines()
    if not 1 <= int(match["line"]) <= len(lines):
        raise AssertionError(f"warning names a line its file does not have: {text!r}")
    label = text[1:text.index("] ")]
    if label.startswith("/") and label != match["file"]:
        raise AssertionError(f"warning of layer {label} located in another file: {text!r}")
    return text[:match.start()]
