"""An agent's two queues: ``next-step`` (steering and injected context) and ``next-turn`` (follow-ups).

A turn's first pre-step claims both, steering first, so a steer always reaches the model before the
follow-ups queued before it; later pre-steps of the same turn claim only ``next-step``.
"""
from __future__ import annotations

import uuid

NEXT_STEP, NEXT_TURN = "next-step", "next-turn"


def user_message(content, source: dict | None = None) -> dict:
    """An identified user-role message (dsh's ``createUserMessage``) from text or content blocks."""
    if isinstance(content, dict) and content.get("role") == "user" and content.get("id"):
        return content
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    return {"id": str(uuid.uuid4()), "role": "user", "content": blocks, "source": source or {"kind": "user"}}


class Inbox:
    def __init__(self) -> None:
        self.next_step: list[dict] = []
        self.next_turn: list[dict] = []

    @property
    def pending(self) -> bool:
        return bool(self.next_step or self.next_turn)

    def put(self, target: str, message: dict) -> None:
        (self.next_step if target == NEXT_STEP else self.next_turn).append(message)

    def claim(self, target: str) -> list[dict]:
        claimed, self.next_step = self.next_step, []
        if target == NEXT_TURN:
            claimed, self.next_turn = claimed + self.next_turn, []
        return claimed

    def clear(self) -> None:
        self.next_step.clear()
        self.next_turn.clear()
