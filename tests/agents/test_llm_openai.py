"""The OpenAI-compatible adapter against a real HTTP/SSE server on 127.0.0.1."""
from __future__ import annotations

import asyncio
import json
import time

import pytest

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.assemble import assemble
from dshctl.agents.llm.openai import OpenAiModel

from tests.agents.llm_helpers import collect_aborting_at_first_delta
from tests.agents.sse_server import Silent, Sse, SseServer, Status, chunk

KEY = "sk-test-SECRET-4242"
DONE = "[DONE]"
USAGE = {"prompt_tokens": 30, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 10},
         "completion_tokens_details": {"reasoning_tokens": 3}}


def _model(server, **config):
    config.setdefault("retry", {"initialDelayMs": 10, "maxDelayMs": 50})
    return OpenAiModel({"baseUrl": server.base_url, "model": "m1", "apiKey": KEY, **config})


def _options(**kw):
    kw.setdefault("messages", [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
                                "source": {"kind": "user"}}])
    return GenerateOptions(provider="openai", model="m1", **kw)


def _stream(model, **kw):
    async def run():
        return [c async for c in model.stream(_options(**kw))]
    return asyncio.run(asyncio.wait_for(run(), 60))


def test_text_reasoning_split_tool_calls_and_usage():
    payloads = [
        chunk({"role": "assistant", "reasoning_content": "Let me "}),
        chunk({"reasoning_content": "think."}),
        chunk({"content": "Reading "}),
        chunk({"content": "two files."}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                               "function": {"name": "read_file", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "list_dir", "arguments": '{"p'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'ath": "."}'}}]}),
        chunk({}, finish="tool_calls"),
        chunk(usage=USAGE),
        DONE,
    ]
    tools = [{"name": "read_file", "description": "read", "parameters": {"type": "object"}}]
    with SseServer() as server:
        server.script = [Sse(payloads)]
        chunks = _stream(_model(server), system="be brief", tools=tools, max_tokens=99)
        request = server.requests[0]
    reply = assemble(chunks)
    assert [b["type"] for b in reply.blocks] == ["reasoning", "text", "tool-call", "tool-call"]
    assert reply.blocks[0]["text"] == "Let me think." and reply.text == "Reading two files."
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in reply.tool_calls] == [
        ("call_a", "read_file", {"path": "a"}), ("call_b", "list_dir", {"path": "."})]
    assert reply.finish == {"kind": "tool-calls"}
    assert reply.usage == {"inputTokens": 20, "outputTokens": 7, "cacheReadTokens": 10, "reasoningTokens": 3}
    assert [c["type"] for c in chunks][-2:] == ["usage", "finish"]
    # deltas arrive as the server sent them: the first argument fragment of call_a was split in three
    assert [c["argumentsDelta"] for c in chunks if c["type"] == "tool-call-delta" and c["id"] == "call_a"] == \
        ["", '{"pa', 'th": "a"}']
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    body = request["body"]
    assert body["model"] == "m1" and body["stream"] is True and body["max_tokens"] == 99
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert body["tools"][0] == {"type": "function", "function": {"name": "read_file", "description": "read",
                                                                 "parameters": {"type": "object"}}}


def test_history_is_serialized_with_reasoning_and_tool_results():
    messages = [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "go"}], "source": {"kind": "user"}},
        {"id": "a1", "role": "assistant", "source": {"kind": "model", "provider": "openai", "model": "m1"},
         "content": [{"type": "reasoning", "text": "hmm"}, {"type": "text", "text": "ok"},
                     {"type": "tool-call", "id": "c1", "name": "t", "arguments": "{}"}]},
        {"id": "r1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
         "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "42"}]}]},
    ]
    with SseServer() as server:
        server.script = [Sse([chunk({"content": "fine"}, finish="stop"), DONE])]
        _stream(_model(server), messages=messages)
        sent = server.requests[0]["body"]["messages"]
    assert sent == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "ok", "reasoning_content": "hmm",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]


def test_finish_length_is_max_tokens():
    with SseServer() as server:
        server.script = [Sse([chunk({"content": "cut"}), chunk({"tool_calls": [
            {"index": 0, "id": "c", "function": {"name": "t", "arguments": '{"a'}}]}), chunk({}, finish="length"), DONE])]
        reply = assemble(_stream(_model(server)))
    assert reply.finish == {"kind": "max-tokens"}
    assert reply.blocks == [{"type": "text", "text": "cut"}]     # the cut-off call is never run


def test_429_waits_for_retry_after_then_succeeds():
    with SseServer() as server:
        server.script = [Status(429, headers={"Retry-After": "1"}), Sse([chunk({"content": "hi"}, finish="stop"), DONE])]
        model = _model(server, retry={"initialDelayMs": 10, "maxDelayMs": 2000})
        started = time.monotonic()
        reply = assemble(_stream(model))
        waited = time.monotonic() - started
        assert len(server.requests) == 2
    assert reply.text == "hi" and model.retries == 1
    assert waited >= 0.95                                          # Retry-After, not the 10 ms backoff


def test_a_retry_after_beyond_max_delay_is_not_waited_for():
    with SseServer() as server:
        server.script = [Status(429, headers={"Retry-After": "60"}), Sse([chunk({"content": "late"}), DONE])]
        started = time.monotonic()
        chunks = _stream(_model(server, retry={"maxDelayMs": 10_000}))
        assert len(server.requests) == 1 and time.monotonic() - started < 5
    assert chunks[-1]["reason"]["failure"] == {"message": "scripted failure (HTTP 429): the server is rate limiting; wait "
                                               "a moment and try again", "code": "RATE_LIMIT", "status": 429,
                                               "providerRetryAfterMs": 60_000}


def test_5xx_retried_until_the_budget_then_a_terminal_error():
    with SseServer() as server:
        server.script = [Status(500), Status(503), Sse([chunk({"content": "ok"}, finish="stop"), DONE])]
        assert assemble(_stream(_model(server))).text == "ok"
        server.script = [Status(500, '{"error": {"message": "overloaded"}}')] * 3
        chunks = _stream(_model(server, retry={"maxRetries": 2, "initialDelayMs": 5}))
        assert len(server.requests) == 3 + 3
    assert chunks == [{"type": "finish", "reason": {"kind": "error", "failure": {
        "message": "overloaded (HTTP 500): the server failed; try again later", "code": "SERVER", "status": 500}}}]


def test_auth_failure_is_not_retried_and_never_shows_the_key():
    echo = json.dumps({"error": {"message": f"invalid key {KEY}", "type": "authentication_error"}})
    with SseServer() as server:
        server.script = [Status(401, echo, headers={"x-request-id": "req-9"})]
        model = _model(server)
        chunks = _stream(model)
        assert len(server.requests) == 1
    failure = chunks[-1]["reason"]["failure"]
    assert failure["code"] == "AUTH" and failure["status"] == 401 and failure["requestId"] == "req-9"
    assert KEY not in json.dumps(chunks) and "***" in failure["message"]
    assert KEY not in repr(model)


def test_a_stalled_stream_times_out():
    with SseServer() as server:
        # stalls before anything was delivered: retried, and the second attempt succeeds
        server.script = [Sse([chunk({"content": "never"}), DONE], stall_after=0),
                         Sse([chunk({"content": "second"}, finish="stop"), DONE])]
        assert assemble(_stream(_model(server, readTimeoutMs=300))).text == "second"
        # stalls after chunks went out: those cannot be taken back, so the stream ends with an error
        server.script = [Sse([chunk({"content": "partial"}), chunk({"content": "more"}), DONE], stall_after=1)]
        chunks = _stream(_model(server, readTimeoutMs=300))
        assert len(server.requests) == 3
    assert [c["type"] for c in chunks] == ["block-start", "text-delta", "finish"]
    assert chunks[-1]["reason"]["kind"] == "error" and chunks[-1]["reason"]["failure"]["code"] == "TIMEOUT"


def test_a_server_that_never_answers_times_out_and_is_retried():
    with SseServer() as server:
        server.script = [Silent(), Sse([chunk({"content": "awake"}, finish="stop"), DONE])]
        model = _model(server, readTimeoutMs=300)
        assert assemble(_stream(model)).text == "awake"
        assert model.retries == 1 and len(server.requests) == 2
        server.script = [Silent()]
        chunks = _stream(_model(server, readTimeoutMs=200, retry={"maxRetries": 0}))
    assert chunks[-1]["reason"]["failure"]["code"] == "TIMEOUT"
    assert "timed out waiting for" in chunks[-1]["reason"]["failure"]["message"]


def test_a_connection_closed_mid_stream_and_a_stream_without_done():
    with SseServer() as server:
        server.script = [Sse([chunk({"content": "a"}), chunk({"content": "b"}), DONE], close_after=2)]
        closed = _stream(_model(server))
        server.script = [Sse([chunk({"content": "a"}, finish="stop")])]     # ends cleanly, no [DONE]
        no_done = _stream(_model(server))
    assert [c["text"] for c in closed if c["type"] == "text-delta"] == ["a", "b"]
    assert closed[-1]["reason"]["failure"]["code"] == "STREAM_CLOSED"
    assert no_done[-1]["reason"]["failure"] == {"message": "stream ended without [DONE]", "code": "STREAM_CLOSED"}


def test_empty_and_malformed_replies():
    with SseServer() as server:
        server.script = [Sse([DONE]), Sse([DONE])]
        empty = _stream(_model(server, retry={"maxRetries": 1, "initialDelayMs": 5}))
        assert len(server.requests) == 2                                  # EMPTY_RESPONSE is retryable
        server.script = [Sse(["{not json", DONE])]
        malformed = _stream(_model(server))
    assert empty[-1]["reason"]["failure"]["code"] == "EMPTY_RESPONSE"
    assert malformed[-1]["reason"]["failure"]["code"] == "MALFORMED_RESPONSE"


def test_connection_refused_is_a_transport_failure():
    with SseServer() as server:
        url = server.base_url
    model = OpenAiModel({"baseUrl": url, "model": "m", "apiKey": KEY, "retry": {"maxRetries": 1, "initialDelayMs": 5}})
    chunks = _stream(model)
    assert chunks[-1]["reason"]["failure"]["code"] == "TRANSPORT" and model.retries == 1


def test_abort_mid_stream():
    abort = asyncio.Event()
    with SseServer() as server:
        server.script = [Sse([chunk({"content": str(i)}) for i in range(50)] + [DONE], delay=0.2)]
        started = time.monotonic()
        chunks = asyncio.run(collect_aborting_at_first_delta(_model(server).stream(_options(abort=abort)), abort))
        assert time.monotonic() - started < 5                   # did not wait for the 50 slow chunks
    assert chunks[-1]["reason"] == {"kind": "aborted", "failure": {"message": "request aborted by caller",
                                                                   "code": "ABORTED"}}


@pytest.mark.parametrize("value, low, high", [("2", 2000, 2000), ("0", None, None), ("soon", None, None)])
def test_retry_after_parsing(value, low, high):
    from dshctl.agents.llm.openai_wire import retry_after_ms
    got = retry_after_ms(value)
    assert (got is None) if low is None else low <= got <= high


def _ok():
    return Sse([chunk({"role": "assistant", "content": "ok"}), chunk(finish="stop"), DONE])


@pytest.mark.parametrize("config, expected", [
    ({}, {}),
    ({"reasoningEffort": "high", "maxTokens": 256000},
     {"thinking": {"type": "enabled"}, "reasoning_effort": "high", "max_tokens": 256000}),
    ({"reasoningEffort": "off"}, {"thinking": {"type": "disabled"}}),
    ({"thinking": "disabled"}, {"thinking": {"type": "disabled"}}),
    ({"thinking": "enabled", "reasoningEffort": "max"}, {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
])
def test_thinking_effort_and_max_tokens_go_on_the_wire_as_dsh_sends_them(config, expected):
    with SseServer() as server:
        server.script = [_ok()]
        assert assemble(_stream(_model(server, **config))).text == "ok"
        body = server.requests[0]["body"]
    sent = {k: body[k] for k in ("thinking", "reasoning_effort", "max_tokens") if k in body}
    assert sent == expected


def test_an_effort_thinking_forbids_fails_before_any_request():
    with SseServer() as server:
        chunks = _stream(_model(server, thinking="disabled", reasoningEffort="high"))
        assert server.requests == []
    assert chunks[-1]["reason"]["failure"]["code"] == "UNSUPPORTED_REASONING_EFFORT"


def test_one_client_serves_every_request_of_the_adapter():
    with SseServer() as server:
        server.script = [_ok(), _ok(), _ok()]
        model = _model(server)

        async def three():
            texts = [assemble([c async for c in model.stream(_options())]).text for _ in range(3)]
            client = model._client
            await model.aclose()
            return texts, client

        texts, client = asyncio.run(three())
        assert texts == ["ok"] * 3 and client.is_closed and model._client is None
        assert len({r["peer"] for r in server.requests}) == 1      # keep-alive: one connection carried all three


def test_a_missing_key_names_the_variable_before_any_request(monkeypatch):
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    model = OpenAiModel({"baseUrl": "https://api.deepseek.com", "model": "m"})
    chunks = asyncio.run(asyncio.wait_for(_collect(model), 10))
    failure = chunks[-1]["reason"]["failure"]
    assert failure["code"] == "AUTH" and "set DEEPSEEK_API_KEY" in failure["message"]
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-env")
    assert OpenAiModel({"baseUrl": "https://api.deepseek.com", "model": "m"}).missing_key() is None


async def _collect(model):
    return [c async for c in model.stream(_options())]


def test_a_401_says_what_to_do():
    with SseServer() as server:
        server.script = [Status(401, '{"error": {"message": "Authentication Fails"}}')]
        failure = _stream(_model(server, apiKeyEnv="MY_KEY"))[-1]["reason"]["failure"]
    assert failure["message"] == ("Authentication Fails (HTTP 401): the server refused the API key; set a valid key "
                                  "in MY_KEY (or apiKey in the llm row) and try again")


def test_an_abort_mid_read_is_an_aborted_finish_and_a_cancel_stays_a_cancel():
    """One abort watcher per response (not a task race per line): an abort set while the reader waits
    on the network ends the stream at once; cancelling the reading task still cancels it."""
    slow = Sse([chunk({"content": "first"})] + [chunk({"content": "x"})] * 5 + [DONE], delay=1.0)

    async def abort_after_first(model, abort):
        out = []
        async for c in model.stream(_options(abort=abort)):
            out.append(c)
            if c["type"] == "text-delta":
                asyncio.get_running_loop().call_later(0.05, abort.set)   # while the next read waits
        return out

    async def cancelled(model):
        task = asyncio.ensure_future(_drain(model.stream(_options(abort=asyncio.Event()))))
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    with SseServer() as server:
        server.script = [slow]
        started = time.monotonic()
        chunks = asyncio.run(abort_after_first(_model(server), asyncio.Event()))
        assert time.monotonic() - started < 0.8          # not at the next line, 1 s later
        assert chunks[-1]["reason"]["kind"] == "aborted"
        assert [c["text"] for c in chunks if c["type"] == "text-delta"] == ["first"]
        server.script = [slow]
        assert asyncio.run(cancelled(_model(server)))


async def _drain(stream):
    async for _ in stream:
        pass
