"""Folding a stream of chunks into the reply it stands for (dsh's ``BlockAssembler``).

Blocks keep the order they were opened in; a ``block-end`` carries the final block and wins over the
deltas (stragglers after it are ignored); a block never closed is assembled from its deltas. On a
``max-tokens`` finish, tool calls are dropped: their arguments may be cut off, so nothing may run
them. Without a ``finish`` chunk the reason is ``stop``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from dshctl.agents.llm.api import ContentBlock, StreamChunk


@dataclass
class _Partial:
    block_type: str
    text: str = ""
    call_id: str | None = None
    name: str | None = None
    arguments: str = ""
    block: ContentBlock | None = None

    def assemble(self, index: int) -> ContentBlock:
        if self.block is not None:
            return self.block
        if self.block_type in ("text", "reasoning"):
            return {"type": self.block_type, "text": self.text}
        if self.block_type == "tool-call":
            return {"type": "tool-call", "id": self.call_id or f"call-{index}", "name": self.name or "",
                    "arguments": self.arguments}
        raise ValueError(f'cannot assemble incomplete block of type "{self.block_type}"')


@dataclass
class AssembledReply:
    blocks: list[ContentBlock]
    finish: dict[str, Any]
    usage: dict[str, Any] | None = None
    interrupted_blocks: list[ContentBlock] = field(default_factory=list)

    @property
    def tool_calls(self) -> list[ContentBlock]:
        return [b for b in self.blocks if b["type"] == "tool-call"]

    @property
    def text(self) -> str:
        return "".join(b["text"] for b in self.blocks if b["type"] == "text")

    def message(self, message_id: str, source: dict[str, Any]) -> dict[str, Any]:
        """The assistant message dsh logs for this reply (``assistant/message``'s ``message``)."""
        return {"id": message_id, "role": "assistant", "content": self.blocks, "source": source}


class BlockAssembler:
    def __init__(self) -> None:
        self._partials: dict[int, _Partial] = {}
        self._order: list[int] = []
        self.usage: dict[str, Any] | None = None
        self._finish: dict[str, Any] | None = None

    def _ensure(self, index: int, block_type: str) -> _Partial:
        partial = self._partials.get(index)
        if partial is None:
            partial = self._partials[index] = _Partial(block_type)
            self._order.append(index)
        return partial

    def push(self, chunk: StreamChunk) -> None:
        kind = chunk["type"]
        if kind == "block-start":
            self._ensure(chunk["index"], chunk["blockType"])
        elif kind in ("text-delta", "reasoning-delta"):
            partial = self._ensure(chunk["index"], "text" if kind == "text-delta" else "reasoning")
            if partial.block is None:
                partial.text += chunk["text"]
        elif kind == "tool-call-delta":
            partial = self._ensure(chunk["index"], "tool-call")
            if partial.block is None:
                partial.call_id = chunk["id"]
                if chunk.get("name"):
                    partial.name = chunk["name"]
                partial.arguments += chunk["argumentsDelta"]
        elif kind == "block-end":
            partial = self._ensure(chunk["index"], chunk["block"]["type"])
            if partial.block is None:
                partial.block = chunk["block"]
        elif kind == "usage":
            self.usage = chunk["usage"]
        elif kind == "finish":
            self._finish = chunk["reason"]
        else:
            raise ValueError(f"unknown stream chunk type {kind!r}")

    @property
    def finish(self) -> dict[str, Any]:
        return self._finish if self._finish is not None else {"kind": "stop"}

    def blocks(self) -> list[ContentBlock]:
        blocks = [self._partials[i].assemble(i) for i in self._order]
        if self.finish["kind"] == "max-tokens":
            blocks = [b for b in blocks if b["type"] != "tool-call"]
        return blocks

    def interrupted_blocks(self) -> list[ContentBlock]:
        """The delivered text/reasoning prefix, for an ``assistant/message`` with ``interrupted: true``."""
        out = []
        for i in self._order:
            partial = self._partials[i]
            kind = partial.block["type"] if partial.block is not None else partial.block_type
            if kind in ("text", "reasoning"):
                block = partial.assemble(i)
                if block["text"].strip():
                    out.append(block)
        return out

    def reply(self) -> AssembledReply:
        return AssembledReply(self.blocks(), self.finish, self.usage, self.interrupted_blocks())


def assemble(chunks: Iterable[StreamChunk]) -> AssembledReply:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(chunk)
    return assembler.reply()
