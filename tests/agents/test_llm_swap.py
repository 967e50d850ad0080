"""Swapping the model from the user layer, as docs/agents.md shows: a rename is one located line with a
hint (never a Python repr); disabling the row and inserting another works, against a real SSE server."""
import json
import subprocess

from tests.agents.sse_server import Sse, SseServer, chunk
from tests.agents.test_tools_dsh_host import home_with
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, user_file, write


def cli(home, *args, env=None):
    return subprocess.run([DSHCTL, "--home", str(home), *args], capture_output=True, text=True, timeout=WAIT_S,
                          env=env)


def test_a_rename_in_the_user_layer_is_one_located_line_with_a_hint(tmp_path):
    home = home_with(tmp_path, [{"text": "scripted"}])
    with HostProcess(home):
        write(user_file(home), "- id: llm\n  name: '@dshctl/llm-openai'\n  config: {model: deepseek-chat}\n")
        done = cli(home, "reload", "--profile", "p")
    out = done.stdout + done.stderr
    assert "PatchWarning(" not in out
    [line] = [l for l in out.splitlines() if "name mismatch" in l]
    assert f"{user_file(home)}:2:" in line and "disabled: true" in line and "insert" in line


def test_disable_and_insert_swaps_the_model(tmp_path, monkeypatch):
    home = home_with(tmp_path, [{"text": "scripted"}])
    with SseServer() as server:
        server.script = [Sse([chunk({"role": "assistant", "content": "from the server"}), chunk(finish="stop"),
                              "[DONE]"])]
        write(user_file(home), f"""- id: llm
  disabled: true
- insert:
    - id: llm-deepseek
      name: '@dshctl/llm-deepseek'
      config: {{baseUrl: '{server.base_url}'}}   # as docs/agents.md, with the test server's address
""")
        with HostProcess(home):
            done = cli(home, "agent", "run", "--profile", "p", "--format", "json", "hello")
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]
        texts = [b["text"] for e in events if e.get("type") == "assistant/message"
                 for b in e["data"]["message"]["content"] if b["type"] == "text"]
        assert texts == ["from the server"]
        body = server.requests[0]["body"]
        assert (body["model"], body["thinking"], body["reasoning_effort"], body["max_tokens"]) == \
            ("deepseek-v4-flash", {"type": "enabled"}, "high", 256000)
