"""Reliability with a real host process: real sockets, real file edits, real signals.

After every fault the host must still serve HTTP, run either the old tree or the new one (never a
mix), and `dshctl status` must say which.
"""
from __future__ import annotations

import json
import signal
import subprocess

from dshctl.host import control

from .helpers import DSHCTL, WAIT_S, HostProcess, drift, eventually, http_get, make_home, row_map, user_file, write

ROWS = """\
    - id: http
      name: "@dshctl/http"
      config: {port: 0}
    - id: status
      name: "@dshctl/status-page"
    - id: a
      name: ./plugins/svc.py
      config: {service: alpha}
    - id: c
      name: ./plugins/boom.py
      config: {tag: old}
"""


def boot(tmp_path, rows=ROWS, **kw) -> HostProcess:
    return boot_with(tmp_path, rows=rows, **kw)


def boot_with(tmp_path, *extra: str, rows=ROWS, **kw) -> HostProcess:
    home = make_home(tmp_path, rows, **kw)
    host = HostProcess(home, "p", *extra).__enter__()
    try:
        host.url = host.wait_for("host/http")["url"]
    except BaseException:
        host.stop()
        raise
    return host


def tree(host) -> dict:
    return row_map(host.status()["rows"])


def assert_serves_and_tells_the_truth(host, expected: dict) -> dict:
    """HTTP answers, the running tree is exactly ``expected``, and /status.json agrees with status."""
    code, body = http_get(host.url + "status.json")
    assert code == 200
    doc = host.status()
    assert row_map(doc["rows"]) == expected
    assert row_map(json.loads(body)["rows"]) == expected
    return doc


def with_c(old: dict, config: dict, state: str = "ACTIVE") -> dict:
    new = dict(old)
    new["c"] = ("./plugins/boom.py", state, config)
    return new


def status_now(host) -> dict:
    """The status document straight from the socket (no CLI start-up: for tight polling)."""
    return control.request(host.home / "profiles" / "p" / ".dshctl" / "host.sock", {"op": "status"})["status"]


def running(host, expected: dict, what: str = "the expected tree") -> None:
    """Wait until the host runs exactly ``expected`` with no reload in flight (the watcher may still
    be picking up the last save on a slow machine)."""
    def now():
        doc = status_now(host)
        return row_map(doc["rows"]) if not doc["host"]["reloading"] else None
    eventually(now, expected, what=what)


def test_plugin_raising_in_apply_is_rolled_back(tmp_path):
    host = boot(tmp_path)
    try:
        old = tree(host)
        write(user_file(host.home), "- id: c\n  config: {fail: on purpose}\n")
        code, outcome = host.reload()
        assert code == 5 and outcome["verdict"] == "rolled-back"
        failed = [r for r in outcome["rows"] if r["action"] == "failed"]
        assert failed[0]["id"] == "c" and "boom: on purpose" in failed[0]["reason"]
        assert failed[0]["config_loc"].startswith(str(user_file(host.home)) + ":2:")
        doc = assert_serves_and_tells_the_truth(host, old)
        assert "old tree still running" in drift(doc)[0]
        # text output of the same verdict, end to end
        text = host.cli("reload")
        assert text.returncode == 5 and "failed      c (./plugins/boom.py)" in text.stdout
        assert "old tree still running" in text.stdout
    finally:
        host.stop()


def test_plugin_hanging_in_apply_times_out_and_rolls_back(tmp_path):
    host = boot(tmp_path)
    try:
        old = tree(host)
        write(user_file(host.home), "- id: c\n  config: {hang: true}\n")
        code, outcome = host.reload()
        assert code == 5, outcome
        assert any("did not finish apply within 1.0s" in (r.get("reason") or "") for r in outcome["rows"])
        assert_serves_and_tells_the_truth(host, old)
    finally:
        host.stop()


def test_plugin_raising_in_a_disposer_still_unloads(tmp_path):
    rows = ROWS.replace("config: {tag: old}", "config: {bad_dispose: true}")
    host = boot(tmp_path, rows)
    try:
        old = tree(host)
        write(user_file(host.home), "- id: c\n  disabled: true\n")
        expected = dict(old)
        expected["c"] = ("./plugins/boom.py", "DISABLED", {"bad_dispose": True})
        running(host, expected, "the watcher to disable c")
        code, outcome = host.reload()
        assert code == 0 and outcome["verdict"] == "unchanged"
        doc = assert_serves_and_tells_the_truth(host, expected)
        assert drift(doc) == []
        host.wait_for("runtime/log", match=lambda e: "disposer exploded" in e["message"])
    finally:
        host.stop()


def test_yaml_syntax_error_mid_edit_is_rejected_with_its_location(tmp_path):
    host = boot(tmp_path)
    try:
        old = tree(host)
        path = user_file(host.home)
        path.write_text("- id: c\n  config: {tag: ne")   # a half-written save, in place
        code, outcome = host.reload()
        assert code == 4 and outcome["verdict"] == "rejected"
        loc = outcome["errors"][0]["loc"]
        assert loc.startswith(f"{path}:") and loc.count(":") == 2
        doc = assert_serves_and_tells_the_truth(host, old)
        assert doc["last_reload"]["verdict"] == "rejected"
        path.write_text("- id: c\n  config: {tag: new}\n")   # the save completes
        running(host, with_c(old, {"tag": "new"}), "the completed save to apply")
        assert_serves_and_tells_the_truth(host, with_c(old, {"tag": "new"}))
    finally:
        host.stop()


def test_edit_adding_a_duplicate_id_is_rejected(tmp_path):
    host = boot(tmp_path)
    try:
        old = tree(host)
        write(user_file(host.home), "- insert:\n  - id: a\n    name: ./plugins/svc.py\n")
        code, outcome = host.reload()
        assert code == 4 and "duplicate loader entry id: a" in outcome["errors"][0]["message"]
        assert_serves_and_tells_the_truth(host, old)
    finally:
        host.stop()


def test_fifty_rapid_saves_end_on_the_last_one(tmp_path):
    host = boot(tmp_path)
    try:
        old = tree(host)
        for i in range(50):
            write(user_file(host.home), f"- id: c\n  config: {{tag: save-{i}}}\n")
        running(host, with_c(old, {"tag": "save-49"}), "the last save to apply")
        doc = assert_serves_and_tells_the_truth(host, with_c(old, {"tag": "save-49"}))
        assert doc["host"]["reloads"] < 50          # coalesced, never one reload per save
        assert drift(doc) == []
        code, outcome = host.reload()
        assert code == 0 and outcome["verdict"] == "unchanged"
    finally:
        host.stop()


def test_sigkill_of_a_reload_client_mid_request(tmp_path):
    # no watcher: the killed client's request is the only thing that can start this reload
    host = boot_with(tmp_path, "--no-watch", "--apply-timeout", "20")   # (the last --apply-timeout wins)
    try:
        old = tree(host)
        write(user_file(host.home), "- id: c\n  config: {sleep: 2, tag: slow}\n")
        client = subprocess.Popen([DSHCTL, "--home", str(host.home), "reload", "--profile", "p"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        eventually(lambda: status_now(host)["host"]["reloading"], what="the client's reload to start")
        client.send_signal(signal.SIGKILL)          # mid-request: the host is inside apply
        client.wait()
        new = with_c(old, {"sleep": 2, "tag": "slow"})
        running(host, new, "the orphaned reload to finish")
        doc = assert_serves_and_tells_the_truth(host, new)
        assert doc["last_reload"]["verdict"] == "applied" and drift(doc) == []
        code, outcome = host.reload()                # the socket still answers the next client
        assert code == 0 and outcome["verdict"] == "unchanged"
    finally:
        host.stop()


def test_sigterm_disposes_every_row_and_exits_zero(tmp_path):
    host = boot(tmp_path)
    host.proc.send_signal(signal.SIGTERM)
    host.wait_for("host/stopped")
    assert host.proc.wait(WAIT_S) == 0
    assert not (host.home / "profiles" / "p" / ".dshctl" / "host.sock").exists()
    result = subprocess.run([DSHCTL, "--home", str(host.home), "status", "--profile", "p"],
                            capture_output=True, text=True)
    assert result.returncode == 6 and "no host is running" in result.stderr


def test_the_socket_refuses_another_user(tmp_path):
    """The socket lives in a 0700 directory and is 0600: a client running as `nobody` cannot even
    connect. (The SO_PEERCRED check behind it is tested on its own in test_control.py.)"""
    host = boot(tmp_path)
    try:
        sock = host.home / "profiles" / "p" / ".dshctl" / "host.sock"
        assert oct(sock.stat().st_mode & 0o777) == "0o600"
        assert oct(sock.parent.stat().st_mode & 0o777) == "0o700"
        probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1])\n"
                 " print('connected')\nexcept PermissionError:\n print('denied')\n")
        result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                 "/usr/bin/python3", "-c", probe, str(sock)], capture_output=True, text=True)
        assert result.stdout.strip() == "denied", result.stderr
        assert host.status()["host"]["pid"] == host.proc.pid   # the owner still gets in
    finally:
        host.stop()


def test_a_host_whose_log_reader_went_away_still_stops_on_sigterm(tmp_path):
    home = make_home(tmp_path, ROWS)
    proc = subprocess.Popen([DSHCTL, "--home", str(home), "host", "run", "--profile", "p", "--log-format",
                             "json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in proc.stdout:                      # read (on this thread only) until ready
            if json.loads(line)["event"] == "host/ready":
                break
        proc.stdout.close()                           # the terminal or pipe reading the log is gone
        write(user_file(home), "- id: c\n  config: {tag: unseen}\n")   # the host logs into it
        sock = home / "profiles" / "p" / ".dshctl" / "host.sock"

        def verdict():
            last = control.request(sock, {"op": "status"})["status"]["last_reload"]
            return last and last["verdict"]
        eventually(verdict, "applied", what="the edit to apply with nobody reading the log")
        proc.send_signal(signal.SIGTERM)
        proc.wait(WAIT_S)                             # raises TimeoutExpired if it hangs
        assert not (home / "profiles" / "p" / ".dshctl" / "host.sock").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_failed_rollback_is_reported_as_such_and_exits_1(tmp_path):
    marker = tmp_path / "marker"
    rows = ROWS.replace("config: {tag: old}", f"config: {{tag: old, fail_if_exists: '{marker}'}}")
    host = boot_with(tmp_path, "--no-watch", rows=rows)
    try:
        marker.write_text("")        # from now on c fails to start, with its new config or its old one
        write(user_file(host.home), f"- id: c\n  config: {{tag: new, fail_if_exists: '{marker}'}}\n")
        code, outcome = host.reload()
        assert code == 1 and outcome["verdict"] == "rollback-failed"
        assert "rollback failed" in outcome["summary"]
        doc = host.status()
        assert doc["last_reload"]["verdict"] == "rollback-failed"
        assert row_map(doc["rows"])["c"][1] == "FAILED"          # status says what runs, not what was meant
        assert http_get(host.url + "status.json")[0] == 200     # the rest still serves
    finally:
        host.stop()


def test_a_second_host_on_the_same_profile_is_refused_before_starting_anything(tmp_path):
    host = boot(tmp_path)
    try:
        second = subprocess.run([DSHCTL, "--home", str(host.home), "host", "run", "--profile", "p",
                                 "--log-format", "json", "--for", "5"], capture_output=True, text=True,
                                timeout=WAIT_S)
        assert second.returncode == 1
        assert "a host is already running for this profile" in second.stderr
        kinds = [json.loads(line)["event"] for line in second.stdout.splitlines()]
        assert "row/started" not in kinds and kinds[-1] == "host/stopped"
        # the running host keeps its socket and its tree
        assert status_now(host)["host"]["pid"] == host.proc.pid
        assert host.status()["host"]["pid"] == host.proc.pid
    finally:
        host.stop()
    # the lock went with the first host: the profile can be run again
    again = subprocess.run([DSHCTL, "--home", str(host.home), "host", "run", "--profile", "p", "--for", "0.2"],
                           capture_output=True, text=True, timeout=WAIT_S)
    assert again.returncode == 0, again.stderr
