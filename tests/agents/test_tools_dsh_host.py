"""dsh's tools as rows of a profile, end to end: `dshctl agent run` started in a workspace reads a file,
edits it, runs a command there and answers, against a running host."""
import json
import subprocess

from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, make_home, write

DSH_TOOL_ROWS = [{"id": "tool-fs", "name": "@dshctl/tool-fs"},
                 {"id": "tool-fs-search", "name": "@dshctl/tool-fs-search"},
                 {"id": "tool-bash", "name": "@dshctl/tool-bash"},
                 {"id": "tool-todo", "name": "@dshctl/tool-todo"}]


def home_with(tmp_path, replies):
    rows = [{"id": "tools", "name": "@dshctl/tools"},
            {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "@dshctl/llm-script", "config": {"replies": replies}},
            {"id": "agent-loop", "name": "@dshctl/agent-loop"}, *DSH_TOOL_ROWS]
    return make_home(tmp_path, "".join(f"    - {json.dumps(row)}\n" for row in rows))


def test_a_turn_reads_edits_and_runs_in_the_cwd_it_was_started_in(tmp_path):
    ws = tmp_path / "project"
    write(ws / "notes.txt", "status: draft\n")
    calls = [{"toolCalls": [{"name": "read", "arguments": {"file_path": "notes.txt"}}]},
             {"toolCalls": [{"name": "edit", "arguments": {"file_path": "notes.txt", "old_string": "draft",
                                                           "new_string": "final"}}]},
             {"toolCalls": [{"name": "bash", "arguments": {"command": "cat notes.txt; echo $DEEPSEEK_API_KEY",
                                                           "description": "Show the notes"}}]},
             {"toolCalls": [{"name": "grep", "arguments": {"pattern": "final"}}]},
             {"text": "The notes are final."}]
    home = home_with(tmp_path, calls)
    with HostProcess(home):
        done = subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json",
                               "Finish the notes."], cwd=ws, capture_output=True, text=True, timeout=WAIT_S,
                              env={**__import__("os").environ, "DEEPSEEK_API_KEY": "sk-leak"})
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    results = [e["data"]["message"]["content"][0]["content"][0]["text"] for e in events
               if e.get("type") == "tool/result"]
    assert results[0] == (f"<path>{ws}/notes.txt</path>\n<type>file</type>\n<content>\n1: status: draft\n\n"
                          "(End of file - total 1 lines)\n</content>")
    assert results[1] == f"The file {ws}/notes.txt has been updated successfully."
    assert results[2] == "status: final\n\n"          # the host's key never reaches the command
    assert results[3] == "Found 1 match\n\nnotes.txt\nLine 1: status: final"
    assert (ws / "notes.txt").read_text() == "status: final\n"
