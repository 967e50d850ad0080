"""Issue 14's table, host rows: hostile values in a running host, and `host run --for` exit codes."""
from __future__ import annotations

import socket
import subprocess
import sys

from dshctl.host import lastgood
from dshctl.host.control_handler import handle

from .helpers import DSHCTL, REPO, WAIT_S, InProcess, make_home, run_async, until, user_file, write

ROWS = """\
    - id: c
      name: ./plugins/boom.py
      config: {tag: old}
"""
BIG = "9" * 5000


async def reload_with(host, home, text: str) -> dict:
    write(user_file(home), text)
    await until(lambda: not host.reloader.lock.locked() and not host.reloader.dirty, what="quiet")
    return (await handle(host, {"op": "reload"}))["outcome"]


@run_async()
async def test_huge_integers_and_lone_surrogates_reload_plainly(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        # a huge plain integer is a string (js-yaml), a lone surrogate a string: both apply
        await reload_with(host, home, f'- id: c\n  config: {{tag: "\\ud800", big: {BIG}}}\n')
        await until(lambda: host.digest == host.status()["host"]["on_disk"]["digest"], what="the apply")
        doc = (await handle(host, {"op": "status"}))["status"]
        assert doc["rows"][0]["config"] == {"tag": "\ud800", "big": BIG}
        assert host.last_reload.verdict in ("applied", "unchanged")
        record = lastgood.load(host.last_good_path)     # recorded, and readable again
        assert record.digest == host.digest and record.rows[0]["config"]["tag"] == "\ud800"
        # what cannot be represented is refused before anything changes: "rejected", with a position
        running = host.digest
        outcome = await reload_with(host, home, f"- id: c\n  config: {{big: !!int {BIG}}}\n")
        assert outcome["verdict"] == "rejected", outcome
        # js-yaml's position for a node it cannot construct: just after the scalar (2:17 + "!!int " + digits)
        at = f"{user_file(home)}:2:{17 + len('!!int ') + len(BIG)}"
        assert outcome["errors"][0]["loc"] == at
        assert host.digest == running
        doc = (await handle(host, {"op": "status"}))["status"]
        assert doc["host"]["on_disk"]["error"].startswith(at)


@run_async()
async def test_an_unexpected_error_while_composing_is_rejected_not_rollback_failed(tmp_path):
    home = make_home(tmp_path, ROWS)
    async with InProcess(home) as host:
        def broken():
            raise RecursionError("injected")
        host.composer.compose = broken   # fault injection: a bug in the reading code
        outcome = (await handle(host, {"op": "reload"}))["outcome"]
        assert outcome["verdict"] == "rejected" and "internal error: RecursionError" in outcome["errors"][0]["message"]


def _taken_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_host_run_for_fails_when_a_row_failed_to_start(tmp_path):
    with _taken_port() as taken:
        port = taken.getsockname()[1]
        home = make_home(tmp_path, f"    - id: http\n      name: \"@dshctl/http\"\n      config: {{port: {port}}}\n"
                                   + ROWS)
        result = subprocess.run([DSHCTL, "--home", str(home), "host", "run", "-p", "p", "--for", "0.5",
                                 "--log-format", "json"], capture_output=True, text=True, timeout=2 * WAIT_S)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("dshctl: error: ") and "1 row(s) failed to start: http" in result.stderr
    assert "Traceback" not in result.stderr
    ok = subprocess.run([DSHCTL, "--home", str(home), "host", "run", "-p", "p", "--for", "0.5"],
                        capture_output=True, text=True, timeout=2 * WAIT_S)
    assert ok.returncode == 0, ok.stderr   # the port is free again: a clean run exits 0


def test_the_demo_fails_loudly_when_its_port_is_taken():
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 9090))
        taken.listen()
        result = subprocess.run([sys.executable, str(REPO / "dev.py"), "demo"], capture_output=True, text=True,
                                timeout=4 * WAIT_S, cwd=REPO)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "http://127.0.0.1:9090 is already taken" in result.stderr
    assert "--- GET" not in result.stdout   # nothing was asked of whatever holds the port
