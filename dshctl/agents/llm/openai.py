"""``@dshctl/llm-openai``: OpenAI-compatible Chat Completions, streamed over HTTP (DeepSeek's API,
Ollama, vLLM, llama.cpp's server).

Config: ``baseUrl``, ``model``, ``apiKey`` (write ``!!js process.env.DEEPSEEK_API_KEY``: the loader
evaluates it, and ``status`` shows the expression, never the value), ``connectTimeoutMs``,
``readTimeoutMs`` (the longest silence between two reads of the stream), ``retry``. A request that
fails before any chunk was delivered — connection error, timeout, 429, 5xx, an empty reply — is
retried after ``Retry-After`` when the server sends one, else after an exponential backoff with
jitter (a ``Retry-After`` beyond ``retry.maxDelayMs`` is not waited for: the failure is final, as
in dsh's ``llm-retry``); once chunks are out a failure cannot be retried (the consumer has seen them)
and the stream ends with a terminal ``finish`` of kind ``error``. Failures never raise out of ``stream()``, and the
API key is scrubbed from every message this adapter produces.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
from typing import Any, AsyncIterator

import httpx

from dshctl.agents.abort import AbortGuard
from dshctl.agents.llm.api import (
    LLM_SERVICE, PRICES_SCHEMA, GenerateOptions, LlmError, LlmFailure, StreamChunk, plain_prices, route_service,
)
from dshctl.agents.llm.identity import USER_AGENT, harness_headers
from dshctl.agents.llm.openai_wire import SseParser, Translator, http_error_code, request_body, retry_after_ms

name = "@dshctl/llm-openai"
PROVIDER = "openai"
RETRYABLE = frozenset({"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"})
schema = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "baseUrl": {"type": "string", "minLength": 1, "default": "https://api.deepseek.com"},
        "model": {"type": "string", "minLength": 1},
        "apiKey": {"type": ["string", "null"]},
        "provider": {"type": "string", "minLength": 1, "default": PROVIDER},
        "route": {"type": "boolean", "default": False},   # serve only agents whose provider option names it
        "connectTimeoutMs": {"type": "integer", "minimum": 1, "default": 10_000},
        "readTimeoutMs": {"type": "integer", "minimum": 1, "default": 300_000},
        "apiKeyEnv": {"type": "string", "minLength": 1, "default": "DEEPSEEK_API_KEY"},
        "maxTokens": {"type": "integer", "minimum": 1},
        "thinking": {"enum": ["enabled", "disabled"]},
        "reasoningEffort": {"enum": ["off", "low", "high", "max"]},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
        "harnessHeaders": {"type": "boolean"},   # no default here: llm-deepseek turns it on
        "inputModalities": {"type": "array", "minItems": 1, "items": {"enum": ["text", "image"]}},
        "prices": PRICES_SCHEMA,
        "retry": {
            "type": "object",
            "default": {},
            "additionalProperties": False,
            "properties": {
                "maxRetries": {"type": "integer", "minimum": 0, "default": 5},
                "initialDelayMs": {"type": "integer", "minimum": 1, "default": 500},
                "maxDelayMs": {"type": "integer", "minimum": 1, "default": 10_000},
                "jitterRatio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1},
            },
        },
    },
}


class _Aborted(Exception):
    pass


def _error_finish(failure: LlmFailure, aborted: bool = False) -> StreamChunk:
    return {"type": "finish", "reason": {"kind": "aborted" if aborted else "error", "failure": failure.to_json()}}


IMAGE_MODELS = frozenset({"deepseek-v4-flash-vision-exp"})   # dsh 0.1.1-rc.2's catalog


class OpenAiModel:
    """The ``llm`` service of ``@dshctl/llm-openai``."""

    def __init__(self, config: dict[str, Any], transport: httpx.AsyncBaseTransport | None = None):
        self.provider = config.get("provider", PROVIDER)
        self.model = config["model"]
        self.base_url = config.get("baseUrl", "https://api.deepseek.com").rstrip("/")
        self.key_env = config.get("apiKeyEnv", "DEEPSEEK_API_KEY")
        self._key = config.get("apiKey") or os.environ.get(self.key_env) or None
        # Keys a client passed over the control socket for its own session's turns (in memory only: never
        # logged, stored or in status); they take precedence over the host's for that session.
        self._session_keys: dict[str, str] = {}
        self.thinking = config.get("thinking")
        self.effort = config.get("reasoningEffort")
        self._headers = dict(config.get("headers") or {})
        self.max_tokens = config.get("maxTokens")
        self.config_modalities = config.get("inputModalities")
        self.prices = plain_prices(config.get("prices"))
        self.harness_headers = bool(config.get("harnessHeaders"))
        self.retry = {"maxRetries": 5, "initialDelayMs": 500, "maxDelayMs": 10_000, "jitterRatio": 0.1,
                      **(config.get("retry") or {})}
        self.timeout = httpx.Timeout(connect=config.get("connectTimeoutMs", 10_000) / 1000,
                                     read=config.get("readTimeoutMs", 300_000) / 1000, write=30.0, pool=30.0)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None    # one per adapter (connection reuse), per event loop
        self._client_loop = None
        self.retries = 0                   # retries made so far (tests and status read it)
        self._host_of: tuple[str | None, str | None] = (None, None)

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            # Plain http:// never does TLS: skip loading the CA bundle (the cost of a client is mostly that).
            verify = not self.base_url.startswith("http://")
            self._client = httpx.AsyncClient(timeout=self.timeout, transport=self._transport, verify=verify)
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()

    def lend_key(self, session_id: str, key: str | None) -> None:
        """Use ``key`` for ``session_id``'s requests (None: stop); a client's key for its turn."""
        if key:
            self._session_keys[session_id] = key
        else:
            self._session_keys.pop(session_id, None)

    def _key_for(self, options: GenerateOptions | None) -> str | None:
        if options is not None and options.session_id in self._session_keys:
            return self._session_keys[options.session_id]
        return self._key

    def missing_key(self, options: GenerateOptions | None = None) -> LlmFailure | None:
        """No key for a server beyond this machine: one line naming the variable, before any request."""
        if self._host_of[0] != self.base_url:      # parsed once per base URL, not per request
            self._host_of = (self.base_url, httpx.URL(self.base_url).host)
        host = self._host_of[1]
        if self._key_for(options) or host in ("127.0.0.1", "localhost", "::1"):
            return None
        return LlmFailure(f"no API key for {self.base_url}: set {self.key_env} in the environment of the process "
                          f"that runs the agent (or apiKey in the llm row)", "AUTH")

    def input_modalities(self, model: str) -> list[str]:
        """What the model takes in (read_image asks): the row's ``inputModalities``, else dsh's catalog
        (DeepSeek's vision model takes images, the others text only)."""
        configured = self.config_modalities
        if configured:
            return list(configured)
        return ["text", "image"] if model in IMAGE_MODELS else ["text"]

    def __repr__(self) -> str:             # never the key
        return f"OpenAiModel(baseUrl={self.base_url!r}, model={self.model!r})"

    def scrub(self, text: str) -> str:
        for key in (self._key, *self._session_keys.values()):
            if key:
                text = text.replace(key, "***")
        return text

    def _failure(self, message: str, code: str, **kw: Any) -> LlmFailure:
        return LlmFailure(self.scrub(message), code, **kw)

    def _delay_ms(self, attempt: int, failure: LlmFailure) -> float | None:
        """dsh's ``llm-retry`` rule: the server's ``Retry-After`` when it is within ``maxDelayMs`` (a
        longer one gives up: better to fail now than to hang), else the jittered backoff."""
        cap = self.retry["maxDelayMs"]
        if failure.provider_retry_after_ms is not None:
            return failure.provider_retry_after_ms if failure.provider_retry_after_ms <= cap else None
        base = min(self.retry["initialDelayMs"] * 2 ** attempt, cap)
        return min(base * (1 + random.uniform(-1, 1) * self.retry["jitterRatio"]), cap)

    async def stream(self, options: GenerateOptions) -> AsyncIterator[StreamChunk]:
        if options.max_tokens is None and self.max_tokens is not None:
            options = dataclasses.replace(options, max_tokens=self.max_tokens)
        failure = self.missing_key(options)
        body = None
        if failure is None:
            try:
                body = json.dumps(request_body(options, effort=self.effort, thinking=self.thinking),
                                  ensure_ascii=False).encode()
            except ValueError as exc:
                failure = LlmFailure(str(exc), "UNSUPPORTED_REASONING_EFFORT")
        if failure is not None:
            yield _error_finish(failure)
            return
        attempt = 0
        while True:
            delivered = 0
            failure = None
            attempt_stream = self._attempt(options, body)
            try:
                async for chunk in attempt_stream:
                    if not delivered and chunk["type"] == "finish" and chunk["reason"]["kind"] == "error":
                        failure = LlmFailure(chunk["reason"]["failure"]["message"], chunk["reason"]["failure"]["code"])
                        break                       # an empty reply: nothing delivered, so retryable
                    delivered += 1
                    yield chunk
                if failure is None:
                    return
            except _Aborted:
                yield _error_finish(LlmFailure("request aborted by caller", "ABORTED"), aborted=True)
                return
            except LlmError as exc:
                failure = exc.failure
            finally:
                await attempt_stream.aclose()
            delay = self._delay_ms(attempt, failure)
            if delivered or failure.code not in RETRYABLE or attempt >= self.retry["maxRetries"] or delay is None:
                yield _error_finish(failure)
                return
            delay /= 1000
            attempt += 1
            self.retries += 1
            if await _aborted_within(options.abort, delay):
                yield _error_finish(LlmFailure("request aborted by caller", "ABORTED"), aborted=True)
                return

    def _request_headers(self, options: GenerateOptions) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "User-Agent": USER_AGENT}
        if self.harness_headers:
            headers.update(harness_headers(options.session_id, options.extra.get("purpose") == "compaction"))
        headers.update(self._headers)
        key = self._key_for(options)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def _attempt(self, options: GenerateOptions, body: bytes) -> AsyncIterator[StreamChunk]:
        url = f"{self.base_url}/chat/completions"
        client = self.client()   # one per adapter (connection reuse); closed with the plugin
        try:
            async with client.stream("POST", url, content=body, headers=self._request_headers(options)) as resp:
                if resp.status_code >= 300:
                    raise LlmError(await self._http_failure(resp))
                async for chunk in self._chunks(resp, options.abort):
                    yield chunk
        except httpx.TimeoutException as exc:
            what = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
            raise LlmError(self._failure(f"timed out {what} {url}", "TIMEOUT")) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise LlmError(self._failure(f"connection to {url} closed mid-stream: {exc}", "STREAM_CLOSED")) \
                from None
        except httpx.TransportError as exc:
            raise LlmError(self._failure(f"request to {url} failed: {exc}", "TRANSPORT")) from None

    async def _http_failure(self, resp: httpx.Response) -> LlmFailure:
        raw = (await resp.aread()).decode("utf-8", "replace")
        message, detail = f"API error (HTTP {resp.status_code})", ""
        try:
            error = json.loads(raw).get("error") or {}
            if isinstance(error, dict):
                detail = " ".join(str(error[k]) for k in ("code", "type", "message") if error.get(k))
                message = str(error.get("message") or message)
        except (ValueError, AttributeError):
            pass
        request_id = resp.headers.get("x-request-id") or resp.headers.get("x-deepseek-request-id") or None
        code = http_error_code(resp.status_code, detail)
        message = f"{message} (HTTP {resp.status_code}): {self._what_to_do(code)}" if self._what_to_do(code) \
            else message
        return self._failure(message, code, status=resp.status_code,
                             provider_retry_after_ms=retry_after_ms(resp.headers.get("retry-after")),
                             request_id=request_id)

    def _what_to_do(self, code: str) -> str:
        return {"AUTH": f"the server refused the API key; set a valid key in {self.key_env} (or apiKey in the "
                        "llm row) and try again",
                "RATE_LIMIT": "the server is rate limiting; wait a moment and try again",
                "QUOTA": "the account's balance or quota is used up; top it up and try again",
                "SERVER": "the server failed; try again later"}.get(code, "")

    async def _chunks(self, resp: httpx.Response, abort: asyncio.Event | None) -> AsyncIterator[StreamChunk]:
        sse, translate = SseParser(), Translator()
        lines = _AbortableLines(resp.aiter_lines(), abort)
        try:
            while True:
                line = await lines.next()
                if line is None:
                    break
                payload = sse.line(line)
                if payload is None:
                    continue
                for chunk in translate.feed(payload):
                    yield chunk
                if translate.done:
                    # read the body to its end, so the connection goes back to the pool for the next request
                    try:
                        while await lines.next() is not None:
                            pass
                    except _Aborted:
                        pass           # the answer is whole; an abort now only costs the connection
                    return
        finally:
            lines.close()
        raise LlmError(self._failure("stream ended without [DONE]", "STREAM_CLOSED"))


class _AbortableLines:
    """A response's lines that stop (:class:`_Aborted`) as soon as ``abort`` is set.

    No race of two tasks per line (that was a third of a turn's CPU on the host), no watcher task for
    the turn's own signal (:class:`~dshctl.agents.abort.AbortGuard`): when ``abort`` fires while the
    reader waits inside the HTTP read, the reading task is cancelled there and the cancellation is
    turned into ``_Aborted``; a line already buffered is returned without any task switch."""

    def __init__(self, lines: AsyncIterator[str], abort: asyncio.Event | None):
        self.lines, self.abort = lines, abort
        self._guard = AbortGuard(abort) if abort is not None else None

    async def next(self) -> str | None:
        guard = self._guard
        if guard is None:
            return await anext(self.lines, None)
        if self.abort.is_set():
            raise _Aborted()
        guard.arm()
        guard.active = True
        try:
            return await anext(self.lines, None)
        except asyncio.CancelledError:
            if not guard.ours():
                raise         # not ours, or someone else cancelled the task as well: theirs stands
            raise _Aborted() from None
        finally:
            guard.active = False

    def close(self) -> None:
        if self._guard is not None:
            self._guard.close()


async def _aborted_within(abort: asyncio.Event | None, seconds: float) -> bool:
    if abort is None:
        await asyncio.sleep(seconds)
        return False
    try:
        await asyncio.wait_for(abort.wait(), seconds)
        return True
    except asyncio.TimeoutError:
        return False


def apply(ctx, config):
    model = OpenAiModel(config)
    ctx.provide(route_service(model.provider) if config.get("route") else LLM_SERVICE, model)
    ctx.effect(lambda: model.aclose, "llm-openai: close the HTTP client")
