"""``@dshctl/llm-deepseek`` against the real dsh's ``llm-deepseek`` on the same server: the body settings
of a turn's request are equal (model, streaming, thinking, effort, max_tokens), and so are the route and
the bearer token, both read from ``DEEPSEEK_BASE_URL`` / ``DEEPSEEK_API_KEY``."""
from __future__ import annotations

import asyncio
import re

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.deepseek import resolved
from dshctl.agents.llm.openai import OpenAiModel
from tests.agents.sse_server import Sse, SseServer, chunk

SETTINGS = ("model", "stream", "stream_options", "thinking", "reasoning_effort", "max_tokens")


def answer():
    return Sse([chunk({"role": "assistant", "content": "hi"}), chunk(finish="stop"), "[DONE]"])


def test_request_settings_equal_dshs(real_dsh, tmp_path, monkeypatch):
    with SseServer() as server:
        server.script = [answer(), answer()]
        base = f"http://127.0.0.1:{server.port}"
        env = real_dsh.env(tmp_path / "home", DEEPSEEK_BASE_URL=base, DEEPSEEK_API_KEY="sk-same")
        done = real_dsh.run(tmp_path / "home", "--profile", "headless", "--patch", str(real_dsh.no_typert_patch),
                            "Say hi.", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        theirs = next(r for r in server.requests if r["body"].get("tools"))
        monkeypatch.setenv("DEEPSEEK_BASE_URL", base)
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-same")
        monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))    # the anonymous user id dsh made there
        server.script = [answer()]
        model = OpenAiModel(resolved({}))
        options = GenerateOptions(provider="deepseek", model=model.model, messages=[
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "Say hi."}], "source": {"kind": "user"}}],
            session_id="session-ours")

        async def one():
            chunks = [c async for c in model.stream(options)]
            await model.aclose()
            return chunks
        asyncio.run(one())
        ours = server.requests[-1]
    assert {k: ours["body"].get(k) for k in SETTINGS} == {k: theirs["body"].get(k) for k in SETTINGS}
    assert ours["path"] == theirs["path"] == "/chat/completions"
    assert ours["headers"]["authorization"] == theirs["headers"]["authorization"] == "Bearer sk-same"
    names = {k for k in theirs["headers"] if k.startswith("x-deepseek-harness-")}
    assert names == {"x-deepseek-harness-user-id", "x-deepseek-harness-session-id"}
    assert {k for k in ours["headers"] if k.startswith("x-deepseek-harness-")} == names
    assert ours["headers"]["x-deepseek-harness-user-id"] == theirs["headers"]["x-deepseek-harness-user-id"]
    assert ours["headers"]["x-deepseek-harness-session-id"] == "session-ours"
    shape = re.compile(r"^[a-z-]+/[0-9][^ ]* \(\+https://[^ )]+\)$")     # product/version (+url)
    assert shape.match(theirs["headers"]["user-agent"]) and shape.match(ours["headers"]["user-agent"])
    assert ours["headers"]["user-agent"].startswith("dshctl/")
    for side in (ours, theirs):
        assert (side["headers"]["content-type"], side["headers"]["accept"]) == ("application/json",
                                                                                "text/event-stream")
