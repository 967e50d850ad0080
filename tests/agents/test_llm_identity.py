"""The User-Agent and x-deepseek-harness-* headers on real requests to a local SSE server."""
import asyncio

from dshctl.agents.llm import identity
from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.deepseek import resolved
from dshctl.agents.llm.openai import OpenAiModel
from tests.agents.sse_server import Sse, SseServer, chunk


def answer():
    return Sse([chunk({"role": "assistant", "content": "hi"}), chunk(finish="stop"), "[DONE]"])


def ask(model, **options):
    async def one():
        base = GenerateOptions(provider="deepseek", model=model.model, messages=[
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}])
        for key, value in options.items():
            setattr(base, key, value)
        [c async for c in model.stream(base)]
        await model.aclose()
    asyncio.run(one())


def test_deepseek_sends_the_harness_headers_and_openai_only_the_user_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    identity._MEMO.clear()
    with SseServer() as server:
        server.script = [answer(), answer(), answer()]
        base = f"http://127.0.0.1:{server.port}"
        ask(OpenAiModel(resolved({"baseUrl": base})), session_id="s-1")
        ask(OpenAiModel(resolved({"baseUrl": base})), extra={"purpose": "compaction"})
        ask(OpenAiModel({"baseUrl": base, "model": "m"}), session_id="s-2")
        first, compact, plain = (r["headers"] for r in server.requests)
    stored = (tmp_path / "dsh" / ".anonymous-user-id").read_text().strip()
    assert first["x-deepseek-harness-user-id"] == stored == compact["x-deepseek-harness-user-id"]
    assert first["x-deepseek-harness-session-id"] == "s-1" and "x-deepseek-harness-compact" not in first
    assert compact["x-deepseek-harness-compact"] == "1" and "x-deepseek-harness-session-id" not in compact
    assert not [k for k in plain if k.startswith("x-deepseek-harness-")]
    assert first["user-agent"] == plain["user-agent"] == identity.USER_AGENT


def test_an_id_file_that_holds_no_id_is_replaced_and_then_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    (tmp_path / ".anonymous-user-id").write_text("garbage\n")
    identity._MEMO.clear()
    made = identity.anonymous_user_id()
    assert (tmp_path / ".anonymous-user-id").read_text().strip() == made != "garbage"
    identity._MEMO.clear()
    assert identity.anonymous_user_id() == made
