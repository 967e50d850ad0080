"""A git fetch that reports bytes received and the rate, from git's own ``--progress`` lines
("Receiving objects:  45% (450/1000), 20.00 MiB | 3.10 MiB/s"), as ``TransferProgress`` messages:
a terminal's status line shows them, piped output leaves them out (cli/plugin_output.py)."""
from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Callable

from dshctl.bundles.outcome import TransferProgress

_LINE = re.compile(r"(?P<phase>Receiving objects|Unpacking objects|Resolving deltas):\s+"
                   r"(?P<pct>\d+)% \((?P<done>\d+)/(?P<total>\d+)\)"
                   r"(?:, (?P<bytes>[\d.]+ [KMGT]?i?B)(?: \| (?P<rate>[\d.]+ [KMGT]?i?B/s))?)?")
_KEEP = 64 * 1024  # of git's other stderr, for the error message


def describe(line: str, what: str) -> TransferProgress | None:
    """The status text for one of git's progress lines (None for any other line)."""
    m = _LINE.search(line)
    if not m:
        return None
    text = f"{what}: {m['phase'].lower()} {m['pct']}% ({m['done']}/{m['total']})"
    if m["bytes"]:
        text += f", {m['bytes']}" + (f" at {m['rate']}" if m["rate"] else "")
    return TransferProgress(text)


def run(cmd: list[str], *, env: dict, cwd: Path | None, timeout: float, what: str,
        progress: Callable[[str], None]) -> tuple[int, bytes, bytes]:
    """Run git with stderr read as it comes: ``(returncode, stdout, other stderr)``;
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the process is killed)."""
    import subprocess

    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    other = bytearray()
    out = bytearray()

    def read_stderr() -> None:
        pending = b""
        for chunk in iter(lambda: proc.stderr.read1(65536), b""):
            pending += chunk
            *lines, pending = re.split(rb"[\r\n]", pending)
            for raw in lines:
                _one(raw)
        _one(pending)

    def _one(raw: bytes) -> None:
        message = describe(raw.decode("utf-8", "replace"), what)
        if message is not None:
            progress(message)
        elif raw.strip():
            other.extend(raw + b"\n")
            del other[:-_KEEP]

    def read_stdout() -> None:
        out.extend(proc.stdout.read())

    readers = [threading.Thread(target=f, daemon=True) for f in (read_stderr, read_stdout)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    finally:
        for reader in readers:
            reader.join(timeout=5)
    return proc.returncode, bytes(out), bytes(other)
