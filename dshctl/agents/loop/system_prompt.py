"""The system prompt of one request: the agent's own text (the persona slot, order 0) followed by the
sections plugins add, in ascending order and joined by blank lines, as dsh's ``systemPrompt`` service
joins its sections. A plugin adds a section through the ``agent/system-sections`` waterfall: a listener
returns the list from ``next()`` plus its own ``{"name", "order", "text"}``, for the agent in the payload.
Empty texts are dropped. The result is what the request header logs, so a section that changes is
logged as a header ``change``."""
from __future__ import annotations

from dshctl.agents.tools.hooks import waterfall

SECTIONS_EVENT = "agent/system-sections"


async def system_prompt(agent, turn: int, step: int) -> str | None:
    sections = await waterfall(agent.ctx, SECTIONS_EVENT, {"agent": agent, "turn": turn, "step": step},
                               default=list)
    parts = [(0, 0, agent.options.get("system"))]
    parts += [(section.get("order", 0), index, section.get("text"))
              for index, section in enumerate(sections or [], start=1) if isinstance(section, dict)]
    texts = [text for _order, _index, text in sorted(parts, key=lambda p: (p[0], p[1]))
             if isinstance(text, str) and text]
    return "\n\n".join(texts) or None
