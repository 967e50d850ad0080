"""`agent run` against a running host lends the client's DEEPSEEK_API_KEY for its turn: the model server sees
it, the host (started without a key) never writes it anywhere — not the session log, the host's log or
`status` — and the next turn without a key in the client's environment sends none."""
import json
import os
import subprocess

from tests.agents.sse_server import Sse, SseServer, chunk
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, make_home

KEY = "sk-client-7f3a9c"


def answer():
    return Sse([chunk({"role": "assistant", "content": "hi"}), chunk(finish="stop"), "[DONE]"])


def run(home, ws, env):
    return subprocess.run([DSHCTL, "--home", str(home), "agent", "run", "--profile", "p", "--format", "json", "Hi."],
                          cwd=ws, capture_output=True, text=True, timeout=WAIT_S, env=env)


def test_the_client_key_reaches_the_model_only(tmp_path, monkeypatch):
    rows = [{"id": "tools", "name": "@dshctl/tools"}, {"id": "agents", "name": "@dshctl/agents"},
            {"id": "llm", "name": "@dshctl/llm-deepseek"}, {"id": "agent-loop", "name": "@dshctl/agent-loop"}]
    home = make_home(tmp_path, "".join(f"    - {json.dumps(row)}\n" for row in rows))
    ws = tmp_path / "ws"
    ws.mkdir()
    with SseServer() as server:
        server.script = [answer(), answer()]
        monkeypatch.setenv("DEEPSEEK_BASE_URL", f"http://127.0.0.1:{server.port}")
        monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
        monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
        with HostProcess(home) as host:
            client = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
            lent = run(home, ws, {**client, "DEEPSEEK_API_KEY": KEY})
            plain = run(home, ws, client)
            status = subprocess.run([DSHCTL, "--home", str(home), "status", "--profile", "p", "--format", "json"],
                                    capture_output=True, text=True, timeout=WAIT_S)
            host_log = json.dumps(host.seen)
        first, second = server.requests
    assert lent.returncode == 0 and plain.returncode == 0, lent.stderr + plain.stderr
    assert first["peer"] == second["peer"]          # one connection: both turns ran in the host, not embedded
    assert first["headers"]["authorization"] == f"Bearer {KEY}"
    assert "authorization" not in second["headers"]
    written = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    for where in (lent.stdout, plain.stdout, status.stdout, status.stderr, host_log, written.decode("latin-1")):
        assert KEY not in where
