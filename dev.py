#!/usr/bin/env python3
"""Set up and run dshctl on a fresh machine (only Python 3.11+ and git needed).

    python3 dev.py demo   # venv + install, then run the main job on the demo home in examples/
    python3 dev.py test   # venv + install, then the whole test suite

The virtual environment lives in .venv and is re-installed when pyproject.toml changes. The test suite
also needs Node.js and npm (differential tests against npm's semver and js-yaml, dsh's own parser) and
the reference `zstd` tool (session log frames), and `tar`, `gzip` and `flock` to set up the real dsh
(../shared/dsh/setup.sh fetches Node 24 and pnpm from the npm registry once per machine, ~80 s): when
they are missing and the machine has apt-get and we are root, `test` installs Debian's packages.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".dshctl-installed"


def ensure_venv() -> None:
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    if sys.version_info < (3, 11):
        sys.exit("dshctl needs Python 3.11 or newer")
    if not (BIN / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["-e", f"{ROOT}[test]"], check=True)
    STAMP.write_text(want)


def run(cmd: list[str]) -> int:
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT).returncode


DEMO_URL = "http://127.0.0.1:9090"   # the http port the demo profile's user layer sets


def demo() -> int:
    dshctl = [str(BIN / "dshctl"), "--home", str(ROOT / "examples" / "home")]
    for sub in (["profile", "dump"], ["preset", "list"]):
        code = run(dshctl + sub)
        if code:
            return code
    # The main job: run the demo profile on the host for 10 s (without --for it runs until ^C). While it
    # runs, ask it for one echo route and its status page, as a person would in a browser, then ask its
    # agent a question: one turn on the scripted model, with one tool call, streamed from the host.
    taken = port_taken(DEMO_URL)
    if taken:
        print(f"dev.py demo: {DEMO_URL} is already taken ({taken}); the demo profile serves on that port.\n"
              "  hint: stop whatever listens there (another demo?) and run it again", file=sys.stderr)
        return 1
    cmd = dshctl + ["host", "run", "--for", "10"]
    print("+ " + " ".join(cmd), flush=True)
    host = subprocess.Popen(cmd, cwd=ROOT)
    agent_code = 0
    try:
        for path in ("/echo/upper?text=hello", "/status.json"):
            answer = fetch(DEMO_URL + path, host)
            if answer is None:
                break
            print(f"\n--- GET {DEMO_URL}{path}\n{summarize(path, answer)}\n", flush=True)
        else:
            ask = dshctl + ["agent", "run", "What do the workspace notes say?"]
            print("\n--- " + " ".join(ask[3:]), flush=True)
            agent_code = run(ask)
            print(flush=True)
    finally:
        code = host.wait()
    return code or agent_code


def port_taken(url: str) -> str | None:
    """Why the demo's port cannot be bound (else None): another process would answer its requests."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the host's server does
        try:
            probe.bind((parts.hostname, parts.port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def fetch(url: str, host: subprocess.Popen, deadline_s: float = 30.0) -> str | None:
    """GET ``url`` once the host serves it (it may still be booting); None if the host exited first."""
    import time
    import urllib.error
    import urllib.request
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and host.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    print(f"--- {url} did not answer", flush=True)
    return None


def summarize(path: str, body: str) -> str:
    """The status page JSON as one line per row (state and id); anything else as it came."""
    if not path.startswith("/status.json"):
        return body.rstrip()
    import json

    def lines(rows, depth=0):
        for row in rows:
            yield f"{'  ' * depth}{row['state']:<9} {row['id']} ({row['name']})"
            yield from lines(row.get("children") or [], depth + 1)
    return "\n".join(lines(json.loads(body)["rows"]))


# Commands the tests run, with the Debian package that brings each. tar, gzip and flock are what
# ../shared/dsh/setup.sh needs besides npm to set up the real dsh (tests/dsh/real_dsh.py); Debian has
# them on every system, a slim image may not. bwrap confines the agent's commands (docs/sandbox.md).
TEST_TOOLS = {"node": "nodejs", "npm": "npm", "zstd": "zstd", "tar": "tar", "gzip": "gzip",
              "flock": "util-linux", "bwrap": "bubblewrap", "etcd": "etcd-server"}   # etcd: tests/fleet/

# The browser app's tests drive Debian's chromium through Playwright (never `playwright install`).
TEST_TOOLS["chromium"] = "chromium"


# Neovim: the editor test of `dshctl lsp` runs docs/editors.md's recipe in it (tests/editors/).
TEST_TOOLS["nvim"] = "neovim"


def ensure_node() -> None:
    import shutil

    missing = sorted({pkg for tool, pkg in TEST_TOOLS.items() if not shutil.which(tool)})
    if not missing:
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print(f"+ installing {', '.join(missing)} (Debian packages) for the differential tests", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, env=env)
        return
    sys.exit(f"the test suite needs {', '.join(missing)} on PATH (e.g. `apt-get install {' '.join(missing)}`)")


def test(extra: list[str]) -> int:
    ensure_node()
    return run([str(BIN / "python"), "-m", "pytest", "-q", *extra])


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test"):
        sys.exit(__doc__)
    ensure_venv()
    sys.exit(demo() if sys.argv[1] == "demo" else test(sys.argv[2:]))


if __name__ == "__main__":
    main()
