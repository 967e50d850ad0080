"""Real git for the bundle tests: source repositories, bare remotes over file:// and a git daemon."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}

PATCH = "- insert:\n    - id: {row}\n      name: {row}-plugin\n      config: {{greeting: {greeting}}}\n"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout.strip()


def bundle_manifest(name: str, **extra) -> str:
    data = {"name": name, "version": "1.0.0", "dsh": {"bundle": {"patch": "cordis.patch.yml"}}}
    data.update(extra)
    return json.dumps(data, indent=2) + "\n"


class SourceRepo:
    """A working repository whose commits are pushed to a bare remote (``self.bare``)."""

    def __init__(self, root: Path, name: str):
        self.work = root / "work" / name
        self.bare = root / "remotes" / f"{name}.git"
        self.work.mkdir(parents=True)
        git("init", "-q", "-b", "main", str(self.work), cwd=root)
        git("init", "-q", "--bare", "-b", "main", str(self.bare), cwd=root)
        git("remote", "add", "origin", str(self.bare), cwd=self.work)

    @property
    def url(self) -> str:
        return self.bare.as_uri()

    def commit(self, files: dict[str, str | None], message: str = "change") -> str:
        for rel, text in files.items():
            path = self.work / rel
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work)
        git("push", "-q", "--force", "origin", "HEAD:main", "--tags", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def history(self, count: int) -> None:
        """``count`` commits (one file each) on a fresh ``main`` in one ``git fast-import`` run
        (each later commit continues the branch), then one push."""
        stream = "".join(
            f"commit refs/heads/main\ncommitter t <t@example.invalid> {1700000000 + i} +0000\n"
            f"data 2\nc{i % 10}\nM 644 inline history/{i}.txt\ndata {len(str(i))}\n{i}\n"
            for i in range(count))
        subprocess.run(["git", "fast-import", "--quiet"], cwd=self.work, env=GIT_ENV, check=True,
                       input=stream.encode(), capture_output=True)
        git("reset", "-q", "--hard", "main", cwd=self.work)
        git("push", "-q", "--force", "origin", "HEAD:main", cwd=self.work)

    def bundle(self, name: str, greeting: str = "hi", row: str | None = None, **extra) -> str:
        return self.commit({"package.json": bundle_manifest(name, **extra),
                            "cordis.patch.yml": PATCH.format(row=row or name, greeting=greeting)},
                           f"{name} {greeting}")

    def tag(self, tag: str, annotated: bool = False) -> None:
        args = ["tag", "-f", "-a", "-m", tag, tag] if annotated else ["tag", "-f", tag]
        git(*args, cwd=self.work)
        git("push", "-q", "--force", "origin", f"refs/tags/{tag}", cwd=self.work)

    def push_branch(self, branch: str) -> None:
        git("push", "-q", "--force", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)

    def reset_hard(self, commit: str) -> None:
        git("reset", "-q", "--hard", commit, cwd=self.work)


@pytest.fixture
def repos(tmp_path):
    made: dict[str, SourceRepo] = {}

    def make(name: str) -> SourceRepo:
        made[name] = SourceRepo(tmp_path, name)
        return made[name]
    return make


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("DSH_HOME", str(h))
    monkeypatch.delenv("DSHCTL_FAULT_STEP", raising=False)
    return h


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_daemon(base: Path, log: Path, deadline: float) -> tuple[subprocess.Popen, int] | None:
    """One attempt: a fresh port, then wait for git's own "Ready to rumble" (it is listening).

    None when the daemon died (the port was taken between choosing and binding it: retry)."""
    port = _free_port()
    with open(log, "wb") as sink:  # a file, not a pipe: a busy daemon can never block on it
        proc = subprocess.Popen(
            ["git", "daemon", "--verbose", "--reuseaddr", "--export-all", "--timeout=60",
             f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
            env=GIT_ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        if b"Ready to rumble" in log.read_bytes():
            return proc, port
        time.sleep(0.05)
    _stop(proc)
    pytest.fail(f"git daemon did not become ready: {log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def git_daemon(tmp_path):
    """``git daemon`` on 127.0.0.1 serving ``tmp_path/remotes``; yields the git:// base URL.

    Robust on a loaded machine: readiness is the daemon's own log line (not a probe connection,
    which could reach another process that grabbed the port), a lost port race retries on a new
    port, and the generous deadline only matters when the machine is very slow.
    """
    base = tmp_path / "remotes"
    base.mkdir(exist_ok=True)
    deadline = time.monotonic() + 60
    for attempt in range(5):
        started = _start_daemon(base, tmp_path / f"git-daemon-{attempt}.log", deadline)
        if started:
            break
    else:
        pytest.fail("git daemon could not bind a port on 127.0.0.1 in 5 attempts")
    proc, port = started
    try:
        yield f"git://127.0.0.1:{port}"
    finally:
        _stop(proc)


def snapshot(directory: Path) -> dict | None:
    """Every file, link and directory under ``directory`` with its bytes: equal means identical."""
    if not directory.exists():
        return None
    out = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            out[rel] = ("dir",)
        else:
            out[rel] = ("file", path.read_bytes(), path.stat().st_mode & 0o777)
    return out


# -- npm: a registry on 127.0.0.1 ------------------------------------------------------------


@pytest.fixture(scope="session")
def npm_server():
    from .npm_registry import Registry, Server
    from .npm_universe import build

    server = Server(Registry())
    build(server.registry)
    try:
        yield server.registry
    finally:
        server.close()


@pytest.fixture
def npm_env(npm_server, tmp_path, monkeypatch):
    """The test registry as npm_config_registry; no user .npmrc; behaviours reset afterwards."""
    user = tmp_path / "user-home"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    for key in list(os.environ):
        if key.lower().startswith("npm_config_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("npm_config_registry", npm_server.url)
    monkeypatch.setenv("npm_config_fetch_retries", "1")
    npm_server.behaviour.clear()
    npm_server.requests.clear()
    npm_server.not_modified.clear()
    npm_server.max_age = 300
    yield npm_server
    npm_server.behaviour.clear()
    npm_server.max_age = 300


def npm_bundle(repos, name: str, deps: dict[str, str], **extra) -> "SourceRepo":
    src = repos(name)
    src.commit({"package.json": bundle_manifest(name, dependencies=deps, **extra),
                "cordis.patch.yml": PATCH.format(row=name, greeting="hi")}, name)
    return src


def installed_packages(bundle_dir: Path) -> set[tuple[str, str]]:
    """(name, version) of every package under ``bundle_dir/node_modules``, at any depth."""
    out = set()
    for pj in bundle_dir.glob("node_modules/**/package.json"):
        rel = pj.relative_to(bundle_dir).parts
        # node_modules/<name>/package.json or node_modules/@s/<name>/package.json, nested any deep
        parent = rel[:-1]
        if len(parent) >= 2 and parent[-2] == "node_modules" or \
                len(parent) >= 3 and parent[-3] == "node_modules" and parent[-2].startswith("@"):
            data = json.loads(pj.read_text())
            out.add((data["name"], data["version"]))
    return out


def cli(capsys, *args):
    """``dshctl ARGS`` in process: (exit code, stdout, stderr)."""
    from dshctl.cli.app import main

    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capsys.readouterr()
    return exit_.value.code, out, err
