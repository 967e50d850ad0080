"""Images on the Chat Completions wire, as dsh's llm-deepseek sends them: a user message with an image
is a list of ``text`` / ``image_url`` parts (a data URL of the bytes); a ``read_image`` result is a
``tool`` message of its text, and its images follow the run of tool messages in one user message after
dsh's "Attached image(s) from tool result:" line. Checked on the body a real SSE server received."""
from __future__ import annotations

import asyncio
import base64
import struct
import zlib

from dshctl.agents.llm.api import GenerateOptions
from dshctl.agents.llm.openai import OpenAiModel
from dshctl.agents.tools.image import image_text, sniff

from tests.agents.sse_server import Sse, SseServer, chunk


def _png(width: int, height: int) -> bytes:
    def part(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + part(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + part(b"IDAT", zlib.compress(raw)) + part(b"IEND", b""))


def _image_block(data: bytes) -> dict:
    media, width, height = sniff(data)
    return {"type": "image", "mediaType": media, "width": width, "height": height, "bytes": len(data),
            "data": base64.b64encode(data).decode("ascii")}


def _sent(messages: list[dict]) -> list[dict]:
    with SseServer() as server:
        server.script = [Sse([chunk({"role": "assistant", "content": "a red square"}), chunk(finish="stop"),
                              "[DONE]"])]
        model = OpenAiModel({"baseUrl": server.base_url, "model": "m", "apiKey": "sk-x"})

        async def run():
            try:
                return [c async for c in model.stream(GenerateOptions(provider="openai", model="m",
                                                                      messages=messages))]
            finally:
                await model.aclose()
        chunks = asyncio.run(asyncio.wait_for(run(), 30))
        assert chunks[-1]["reason"] == {"kind": "stop"}
        return server.requests[0]["body"]["messages"]


def test_read_image_results_travel_as_image_url_parts_after_their_tool_messages():
    first, second = _png(3, 2), _png(1, 1)
    text = image_text("/w/a.png", "image/png", 3, 2, len(first))
    messages = [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "what is in a.png and b.png?"}],
         "source": {"kind": "user"}},
        {"id": "a", "role": "assistant", "source": {"kind": "model", "provider": "openai", "model": "m"},
         "content": [{"type": "tool-call", "id": "c1", "name": "read_image", "arguments": '{"file_path":"a.png"}'},
                     {"type": "tool-call", "id": "c2", "name": "read_image", "arguments": '{"file_path":"b.png"}'}]},
        {"id": "r1", "role": "user", "source": {"kind": "tool", "callId": "c1"}, "content": [
            {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": text},
                                                                   _image_block(first)]}]},
        {"id": "r2", "role": "user", "source": {"kind": "tool", "callId": "c2"}, "content": [
            {"type": "tool-result", "toolCallId": "c2", "content": [{"type": "text", "text": "b"},
                                                                   _image_block(second)]}]},
    ]
    wire = _sent(messages)
    assert [m["role"] for m in wire] == ["user", "assistant", "tool", "tool", "user"]
    assert wire[0]["content"] == "what is in a.png and b.png?"       # text only: still a string
    assert wire[2] == {"role": "tool", "tool_call_id": "c1", "content": text}
    assert wire[3] == {"role": "tool", "tool_call_id": "c2", "content": "b"}
    assert wire[4]["content"] == [
        {"type": "text", "text": "Attached image(s) from tool result:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(first).decode()}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(second).decode()}},
    ]
    assert base64.b64decode(wire[4]["content"][1]["image_url"]["url"].split(",", 1)[1]) == first


def test_a_user_image_is_a_list_of_parts_in_order():
    data = _png(2, 2)
    wire = _sent([{"id": "u", "role": "user", "source": {"kind": "user"},
                   "content": [{"type": "text", "text": "look:"}, _image_block(data), {"type": "text", "text": ""},
                               {"type": "text", "text": "which colour?"}]}])
    assert wire == [{"role": "user", "content": [
        {"type": "text", "text": "look:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}},
        {"type": "text", "text": "which colour?"}]}]
