"""The demo home (examples/home, copied: tests never write into it) on a real host process: the echo
routes, a live edit of its user layer that applies, and one that is rolled back."""
from __future__ import annotations

import shutil

from .helpers import REPO, HostProcess, drift, eventually, http_get, write
from demo_home import copy_demo_home



def demo_host(tmp_path) -> HostProcess:
    home = tmp_path / "home"
    copy_demo_home(home)
    # the demo serves on 9090; a test takes any free port (a --patch layer comes after the user layers)
    port0 = write(tmp_path / "port0.yml", "- id: http\n  config: {host: 127.0.0.1, port: 0}\n")
    host = HostProcess(home, "web", "--patch", str(port0)).__enter__()
    try:
        host.url = host.wait_for("host/http")["url"]
    except BaseException:
        host.stop()
        raise
    return host


def get(host, path: str) -> tuple[int, str]:
    code, body = http_get(host.url + path.lstrip("/"))
    return code, body.decode()


def test_demo_home_serves_its_echo_route_and_status_page(tmp_path):
    host = demo_host(tmp_path)
    try:
        assert get(host, "/echo/upper?text=hi") == (200, "HI\n")
        assert get(host, "/echo/lower?text=HI")[0] == 404          # the user layer disables echo-lower
        doc = host.status()
        assert set(doc) >= {"host", "rows", "last_reload"}
        [echoes] = [r for r in doc["rows"] if r["id"] == "echoes"]
        assert [(c["id"], c["state"]) for c in echoes["children"]] == [("echo-upper", "ACTIVE"),
                                                                        ("echo-lower", "DISABLED")]
        assert all({"id", "name", "state", "config", "children"} <= set(r) for r in doc["rows"])
        code, body = get(host, "/status.json")
        assert code == 200 and '"echo-upper"' in body
    finally:
        host.stop()


def test_live_edits_of_the_demo_user_layer_apply_and_roll_back(tmp_path):
    host = demo_host(tmp_path)
    layer = host.home / "profiles" / "web" / "cordis.patch.yml"
    try:
        write(layer, layer.read_text().replace("  disabled: true", "  disabled: false"))
        eventually(lambda: get(host, "/echo/lower?text=HeLLo"), (200, "hello\n"), what="echo-lower's route")
        assert host.wait_for("reload/applied")["event"] == "reload/applied"
        write(layer, layer.read_text() + "- id: echo-upper\n  config:\n    style: shout\n")
        failed = host.wait_for("reload/rolled-back")
        assert "failed" in failed["message"]
        error = host.wait_for("row/failed", match=lambda e: e["message"].startswith("echo-upper"))
        assert "unknown echo style 'shout'" in error["message"]
        assert get(host, "/echo/upper?text=still") == (200, "STILL\n")   # the old tree still runs
        assert get(host, "/echo/lower?text=ALSO") == (200, "also\n")
        doc = host.status()
        assert doc["last_reload"]["verdict"] == "rolled-back"
        assert "old tree still running" in drift(doc)[0]
    finally:
        host.stop()
