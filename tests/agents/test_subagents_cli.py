"""``dshctl agent run`` with sub-agents, as a user runs it (an embedded host, the scripted model): five
background children run at once, each start and settlement shows on stderr, and the run lasts until the
parent has answered from their notices — its completion report on stdout."""
from __future__ import annotations

import json
import subprocess
import time

from tests.agents.subagent_helpers import call, subagent_home
from tests.host.helpers import DSHCTL, WAIT_S

TASKS = [f"task-{n}" for n in range(1, 6)]
REPLIES = [{"toolCalls": [call("subagent", {"description": f"job {t}", "prompt": t}) for t in TASKS]},
           {"when": "started subagent", "text": "Started five."},
           *({"when": t, "text": f"{t} is done", "delayMs": 1500} for t in TASKS),
           *({"when": "Background subagent", "text": "Report: all five subagents finished."} for _ in TASKS)]


def run(home, *args):
    began = time.monotonic()
    done = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", *args],
                          capture_output=True, text=True, timeout=WAIT_S)
    return done, time.monotonic() - began


def test_agent_run_shows_five_parallel_children_and_the_report(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    done, wall = run(home, "delegate five tasks")
    assert done.returncode == 0, done.stderr
    starts = [line for line in done.stderr.splitlines() if line.strip().startswith("⇢ subagent ")]
    ends = [line for line in done.stderr.splitlines() if line.strip().startswith("⇠ subagent ")]
    assert len(starts) == 5 and all(line.endswith("(spawn) started") for line in starts)
    assert len(ends) == 5 and all(" completed: task-" in line and line.endswith(" is done") for line in ends)
    assert {line.split()[2] for line in starts} == {line.split()[2] for line in ends}
    assert "Report: all five subagents finished." in done.stdout
    assert wall < 5 * 1.5 - 2, wall    # the children overlap: five in a row alone would take 7.5 s


def test_json_format_keeps_stdout_the_parents_log(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    done, _ = run(home, "--format", "json", "delegate five tasks")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    notices = [e for e in lines[:-1] if e["type"] == "user/message" and e["data"]["source"]["kind"] == "subagent-settled"]
    assert len(notices) == 5 and lines[-1]["done"] is True
    assert sum(1 for line in done.stderr.splitlines() if "⇠ subagent " in line) == 5


def test_agent_chat_shows_the_children_starting_and_settling(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    done = subprocess.run([DSHCTL, "--home", str(home), "agent", "chat", "--profile", "p"], input="delegate five\n",
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    assert sum(1 for line in done.stderr.splitlines() if line.strip().startswith("⇢ subagent ")) == 5
    assert sum(1 for line in done.stderr.splitlines() if line.strip().startswith("⇠ subagent ")) == 5
    assert "Report: all five subagents finished." in done.stdout


def test_session_list_tree_shows_the_family(tmp_path):
    home = subagent_home(tmp_path, REPLIES)
    assert run(home, "delegate five tasks")[0].returncode == 0
    listed = subprocess.run([DSHCTL, "--home", str(home), "session", "list", "--tree", "--format", "json"],
                            capture_output=True, text=True, timeout=WAIT_S)
    assert listed.returncode == 0, listed.stderr
    (root,) = json.loads(listed.stdout)
    assert len(root["children"]) == 5 and "origin" not in root
    for child in root["children"]:
        assert child["parentSession"] == root["id"] and child["origin"] == "subagent"
        assert child["label"].startswith("job task-") and child["mode"] == "continuable"
        assert (child["model"], child["state"], child["stopReason"]) == ("scripted", "settled", "completed")
    text = subprocess.run([DSHCTL, "--home", str(home), "session", "list", "--tree"],
                          capture_output=True, text=True, timeout=WAIT_S)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert sum(1 for line in lines if "└ " in line and "completed" in line and "settled" in line) == 5
    assert any(root["id"] in line and "└" not in line for line in lines)
