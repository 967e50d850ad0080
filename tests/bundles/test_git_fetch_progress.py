"""A large git fetch shows bytes received and the rate on a terminal (git's own --progress lines,
parsed), and piped output stays free of them: real git daemon on 127.0.0.1, real CLI process, a
real pty (issue #29)."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from dshctl.bundles import git as gitmod
from dshctl.bundles.git_progress import describe
from dshctl.bundles.outcome import TransferProgress

from .conftest import PATCH, bundle_manifest, git

RATE = ("KiB/s", "MiB/s", "GiB/s")


def _big_bundle(repos, name: str = "dsh-big"):
    """~30 MB that does not compress, in 150 objects: git reports bytes and rate after its
    first second-long interval, and index-pack (not unpack-objects) receives them."""
    src = repos(name)
    src.commit({"package.json": bundle_manifest(name),
                "cordis.patch.yml": PATCH.format(row="big", greeting="hi")})
    blobs = src.work / "blobs"
    blobs.mkdir()
    for i in range(150):
        (blobs / f"{i}.bin").write_bytes(os.urandom(200_000))
    git("add", "-A", cwd=src.work)
    git("commit", "-q", "-m", "blobs", cwd=src.work)
    git("push", "-q", "origin", "HEAD:main", cwd=src.work)
    return src, git("rev-parse", "HEAD", cwd=src.work)


def test_the_parser_on_git_lines():
    line = "Receiving objects:  45% (450/1000), 20.00 MiB | 3.10 MiB/s"
    assert describe(line, "fetching x") == \
        "fetching x: receiving objects 45% (450/1000), 20.00 MiB at 3.10 MiB/s"
    assert isinstance(describe(line, "x"), TransferProgress)
    assert describe("Resolving deltas: 100% (3/3), done.", "x") == "x: resolving deltas 100% (3/3)"
    assert describe("remote: Counting objects: 100% (3/3), done.", "x") is None
    assert describe("fatal: unable to access", "x") is None


def test_fetch_reports_bytes_and_rate_from_a_git_daemon(repos, git_daemon, tmp_path):
    _src, commit = _big_bundle(repos)
    runner = gitmod.Git(tmp_path / "git-home")
    seen: list[str] = []
    gitmod.fetch_commit(runner, f"{git_daemon}/dsh-big.git", commit, tmp_path / "r.git",
                        progress=seen.append)
    with_bytes = [m for m in seen if any(r in m for r in RATE)]
    assert with_bytes, seen[-5:]
    assert all(isinstance(m, TransferProgress) for m in seen)
    assert any("receiving objects 100%" in m for m in seen)


def test_a_failed_fetch_with_progress_still_names_gits_reason(git_daemon, tmp_path):
    runner = gitmod.Git(tmp_path / "git-home")
    try:
        gitmod.fetch_commit(runner, f"{git_daemon}/missing.git", "a" * 40,
                            tmp_path / "r.git", progress=lambda m: None)
    except gitmod.GitError as exc:
        assert "fatal:" in exc.message or "not found" in exc.message.lower() or \
            "exported" in exc.message, exc.message
    else:
        raise AssertionError("fetching a missing repository succeeded")


def _cli_on_pty(args: list[str], env: dict) -> tuple[int, str]:
    """The real `dshctl` with stdout and stderr on a pseudo-terminal; what the terminal got."""
    exe = Path(sys.executable).with_name("dshctl")
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(exe), *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def test_terminal_shows_bytes_and_rate_and_a_pipe_stays_clean(home, repos, git_daemon):
    _big_bundle(repos)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(DSH_HOME=str(home), TERM="xterm-256color", COLUMNS="160")
    code, screen = _cli_on_pty(["plugin", "--profile", "web", "add",
                                f"{git_daemon}/dsh-big.git"], env)
    assert code == 0, screen[-2000:]
    assert "receiving objects" in screen and any(r in screen for r in RATE), screen[-2000:]

    piped = subprocess.run([str(Path(sys.executable).with_name("dshctl")), "plugin", "--profile",
                            "other", "add", f"{git_daemon}/dsh-big.git#main"],
                           env={**env, "DSH_HOME": str(home.parent / "home2")},
                           capture_output=True, text=True, timeout=180)
    assert piped.returncode == 0, piped.stderr
    assert "fetching git://" in piped.stderr  # the phase line is still there
    assert "receiving objects" not in piped.stderr and not any(r in piped.stderr for r in RATE)
    assert "\r" not in piped.stderr and "\x1b" not in piped.stderr
