"""Shared by the llm adapter tests."""
from __future__ import annotations


async def collect_aborting_at_first_delta(stream, abort) -> list[dict]:
    """Every chunk of ``stream``, setting ``abort`` as soon as the first text delta arrives."""
    out = []
    async for chunk in stream:
        out.append(chunk)
        if chunk["type"] == "text-delta":
            abort.set()
    return out
