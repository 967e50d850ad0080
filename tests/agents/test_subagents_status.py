"""Live children in the host's status: while ``dshctl agent run`` on a running host waits for three
background children (the scripted model holds each for seconds), ``dshctl status`` lists them (id,
label, model, state, parent) in both formats; once they settle the list is empty again."""
from __future__ import annotations

import subprocess
import time

from tests.agents.subagent_helpers import call, subagent_home
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess

TASKS = ["alpha", "beta", "gamma"]
REPLIES = [{"toolCalls": [call("subagent", {"description": f"job {t}", "prompt": t}) for t in TASKS]},
           {"when": "started subagent", "text": "Started three."},
           *({"when": t, "text": f"{t} is done", "delayMs": 3000} for t in TASKS),
           *({"when": "Background subagent", "text": "All done."} for _ in TASKS)]


def test_host_status_lists_the_live_children_while_they_run(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    with HostProcess(home) as host:
        run = subprocess.Popen([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "delegate three"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline, live = time.monotonic() + WAIT_S, []
            while time.monotonic() < deadline and len(live) < 3:
                live = host.status().get("subagents") or []
                time.sleep(0.1)
            text = host.cli("status")
            out, err = run.communicate(timeout=WAIT_S)
        finally:
            if run.poll() is None:
                run.kill()
        assert run.returncode == 0, err
        assert sorted(c["label"] for c in live) == ["job alpha", "job beta", "job gamma"]
        parents = {c["parent"] for c in live}
        assert len(parents) == 1 and None not in parents
        for child in live:
            assert (child["model"], child["state"], child["mode"], child["provider"]) == (
                "scripted", "running", "continuable", "spawn")
        assert text.returncode == 0, text.stderr
        assert "live sub-agents (3):" in text.stdout
        for child in live:
            assert any(child["id"] in line and child["label"] in line and "running" in line
                       for line in text.stdout.splitlines())
        assert "All done." in out
        assert host.status()["subagents"] == []
