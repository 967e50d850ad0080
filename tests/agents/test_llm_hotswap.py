"""Swapping the ``llm`` row in a running host: its dependents restart on the new provider, and the API
key (from ``!!js process.env``) reaches the server but never ``status`` or the host's log."""
from __future__ import annotations

import json
from tests.agents.sse_server import Sse, SseServer, chunk
from tests.host.helpers import HostProcess, bundle_dir, eventually, make_home, user_file, write

KEY = "sk-hotswap-SECRET-777"

# A dependent of the llm service: on every start it asks the model one question and records the
# answer with the provider and model it was given (and how often it started).
ASKER = '''
import asyncio, json
from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.assemble import assemble

name = "asker"
inject = ["llm"]
schema = {"type": "object", "default": {}, "properties": {"out": {"type": "string"}}}

def apply(ctx, config):
    llm = ctx.get("llm")

    async def ask():
        options = GenerateOptions(provider=llm.provider, model=llm.model, messages=[
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "who are you"}],
             "source": {"kind": "user"}}])
        reply = assemble([c async for c in llm.stream(options)])
        with open(config["out"], "a") as fh:
            fh.write(json.dumps({"provider": llm.provider, "model": llm.model, "text": reply.text}) + "\\n")

    def start():
        return asyncio.get_running_loop().create_task(ask()).cancel
    ctx.effect(start, "asker.ask")
'''


def _user_layer(server, model: str) -> str:
    return ("- insert:\n  - id: llm\n    name: '@dshctl/llm-openai'\n    config:\n"
            f"      baseUrl: {server.base_url}\n      model: {model}\n"
            "      apiKey: !!js process.env.DSHCTL_TEST_LLM_KEY\n      retry: {initialDelayMs: 10}\n")


def _answers(out) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def test_llm_row_hot_swap_restarts_dependents_and_hides_the_key(tmp_path, monkeypatch):
    out = tmp_path / "answers.jsonl"
    with SseServer() as server:
        server.script = [Sse([chunk({"content": f"I am {m}"}, finish="stop"), "[DONE]"]) for m in ("m1", "m2")]
        rows = (f"    - {{id: asker, name: ./plugins/asker.py, config: {{out: '{out}'}}}}\n")
        home = make_home(tmp_path, rows, user=_user_layer(server, "m1"))
        write(bundle_dir(home) / "plugins" / "asker.py", ASKER.lstrip())
        monkeypatch.setenv("DSHCTL_TEST_LLM_KEY", KEY)
        with HostProcess(home) as host:
            eventually(lambda: len(_answers(out)), 1, what="first answer")
            assert _answers(out) == [{"provider": "openai", "model": "m1", "text": "I am m1"}]
            # the user layer changes the model: the llm row restarts, and so does its dependent
            write(user_file(home), _user_layer(server, "m2"))
            host.reload()
            eventually(lambda: len(_answers(out)), 2, what="answer after the swap")
            assert _answers(out)[-1] == {"provider": "openai", "model": "m2", "text": "I am m2"}
            status = host.cli("status", "--format", "json").stdout
            assert "process.env.DSHCTL_TEST_LLM_KEY" in status
            # the implementation swaps too: a scripted model in place of the HTTP one
            write(user_file(home), "- insert:\n  - id: llm\n    name: '@dshctl/llm-script'\n"
                                   "    config: {replies: [{text: scripted now}]}\n")
            host.reload()
            eventually(lambda: len(_answers(out)), 3, what="answer from the scripted model")
            assert _answers(out)[-1] == {"provider": "script", "model": "scripted", "text": "scripted now"}
            host.stop()
            log = "".join(json.dumps(e) for e in host.seen) + host.proc.stderr.read()
        assert [r["headers"]["authorization"] for r in server.requests] == [f"Bearer {KEY}"] * 2
        assert [r["body"]["model"] for r in server.requests] == ["m1", "m2"]
    assert KEY not in status and KEY not in log
    assert KEY not in user_file(home).read_text()                 # only the expression is on disk
