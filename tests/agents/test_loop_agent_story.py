"""The seeds' user story end to end, with real processes: the loop-agent bundle served over
``git daemon``, installed with ``dshctl plugin add``, run on the scripted model by ``dshctl host run``,
armed with ``/forever`` from ``dshctl agent run``, then switched off and on live in the user layer."""
from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request

from tests.agents.loop_agent_helpers import BUNDLE_SRC, free_port
from tests.bundles.conftest import SourceRepo, git_daemon  # noqa: F401 - the fixture
from tests.host.helpers import DSHCTL, REPO, WAIT_S, HostProcess, eventually, row_map, write
from demo_home import copy_demo_home


def dshctl(home, *args, timeout=WAIT_S):
    return subprocess.run([DSHCTL, "--home", str(home), *args], capture_output=True, text=True, timeout=timeout)


def bundle_files() -> dict[str, str]:
    return {str(p.relative_to(BUNDLE_SRC)): p.read_text() for p in BUNDLE_SRC.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def state_route(port):
    """The state route's JSON, or the HTTP status when the route is gone."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/loop-agent/state", timeout=5) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code


def continuations(home, session) -> list[str]:
    shown = dshctl(home, "session", "export", session, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    events = json.loads(shown.stdout)["events"]
    return [e["data"]["content"][0]["text"] for e in events
            if e["type"] == "user/message" and e["data"]["content"][0]["text"].startswith("round ")]


def loop_row(host):
    return row_map(host.status()["rows"]).get("loop-runner")


def test_install_from_git_forever_then_switch_it_off_and_on_live(tmp_path, git_daemon):  # noqa: F811
    repo = SourceRepo(tmp_path, "dsh-loop-agent")
    repo.commit(bundle_files(), "dsh-loop-agent")
    home = tmp_path / "home"
    copy_demo_home(home)

    added = dshctl(home, "plugin", "--profile", "web", "add", f"{git_daemon}/dsh-loop-agent.git")
    assert added.returncode == 0, added.stderr
    assert (home / "profiles" / "web" / "node_modules" / "dsh-loop-agent" / "loop_agent" / "driver.py").is_file()
    assert "dsh-loop-agent" in json.loads((home / "profiles" / "web" / "package.json").read_text())[
        "dsh"]["profile"]["bundles"]

    port = free_port()
    layer = write(tmp_path / "story.yml", f"- id: http\n  config: {{host: 127.0.0.1, port: {port}}}\n"
                  "- id: loop-runner\n  config: {continuation: 'round {{round}}', pollIntervalMs: 50}\n")
    user = home / "profiles" / "web" / "cordis.patch.yml"
    original_user = user.read_text()
    with HostProcess(home, "web", "--patch", str(layer)) as host:
        assert loop_row(host)[1] == "ACTIVE"
        assert state_route(port)["attachedAgents"] == 0

        armed = dshctl(home, "agent", "run", "--profile", "web", "--format", "json", "/forever")
        assert armed.returncode == 0, armed.stderr
        session = json.loads(armed.stdout.splitlines()[-1])["session"]
        eventually(lambda: len(continuations(home, session)) >= 2, what="two continuation rounds")
        rounds = continuations(home, session)
        assert rounds[:2] == ["round 1", "round 2"]
        assert state_route(port)["attachedAgents"] == 1

        # The hard off switch in the user layer: dshctl applies it live (dsh needs a restart).
        write(user, original_user + "\n- id: loop-runner\n  disabled: true\n")
        code, verdict = host.reload()
        assert code == 0, verdict
        # Whichever applied the save first (the watcher or this reload), the reload reports the row stopped.
        host.wait_for("row/stopped", match=lambda e: "loop-runner" in e["message"])
        if verdict["verdict"] == "applied":
            assert {"loop-runner": "stopped"}.items() <= {r["id"]: r["action"] for r in verdict["rows"]}.items()
        else:
            assert verdict["verdict"] == "unchanged" and "loop-runner stopped" in verdict["summary"], verdict
        eventually(lambda: loop_row(host)[1] == "DISABLED", what="loop-runner disabled in status")
        assert state_route(port) == 404
        settled = len(continuations(home, session))
        time.sleep(1.0)
        assert len(continuations(home, session)) <= settled + 1   # at most the turn already queued

        write(user, original_user)                               # remove the override: it comes back
        code, verdict = host.reload()
        assert code == 0, verdict
        host.wait_for("row/started", match=lambda e: "loop-runner" in e["message"])
        eventually(lambda: loop_row(host)[1] == "ACTIVE", what="loop-runner active again")
        eventually(lambda: isinstance(state_route(port), dict) and state_route(port)["attachedAgents"] == 1,
                   what="the armed session re-attached")
        before = len(continuations(home, session))
        eventually(lambda: len(continuations(home, session)) > before, what="continuations resumed")
