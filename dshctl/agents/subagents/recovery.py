"""After a crash: children whose turn a kill cut are closed and their parents told.

When the row starts (and the agent loop is there to host agents), every stored child whose log ends
inside a turn is opened once: the store's repair appends dsh's interrupted closers (the one-shot record
is then ``interrupted``, as dsh restores it) and the child leaves again. A continuable child's parent
then gets the settlement notice for that cut activation (``was stopped before it finished.``, with the
partial answer when there is one), which wakes it: the parent decides whether to ``send_message`` the
child back to work. A one-shot child's parent needs no notice — its own cut turn, closed the same way,
already records the call as unfinished. Nothing is lost beyond the torn tail the store drops.
"""
from __future__ import annotations

import asyncio

from . import descriptor as descriptors
from . import outcome

FACTORY_WAIT_S = 10.0


async def recover(runtime) -> list[str]:
    """Close every crash-cut child; returns their ids (tests and the host log read them)."""
    agents = runtime.ctx.agents
    for _ in range(int(FACTORY_WAIT_S / 0.05)):
        if agents.factory is not None:
            break
        await asyncio.sleep(0.05)
    else:
        return []
    cut = await asyncio.to_thread(_cut_children, agents.store)
    for child_id, parent_id, mode in cut:
        child = await agents.open(child_id)
        events = list(child.session.events)
        await agents.close(child_id)
        if mode == "continuable" and parent_id is not None:
            await _tell_parent(runtime, parent_id, child_id, events)
    return [c for c, _p, _m in cut]


def _cut_children(store) -> list[tuple[str, str | None, str | None]]:
    out = []
    for info in store.list():
        if info.error is not None or info.header.get("origin") != "subagent":
            continue
        try:
            seen = store.read(info.id)
        except Exception:  # noqa: BLE001 - an unreadable log is the session commands' business
            continue
        if seen.closers:
            found = _descriptor(seen.events)
            out.append((info.id, info.header.get("parentSession"), (found or {}).get("mode")))
    return out


def _descriptor(events):
    try:
        return descriptors.fold(events)
    except descriptors.BadDescriptor:
        return None


async def _tell_parent(runtime, parent_id: str, child_id: str, events: list[dict]) -> None:
    from dshctl.agents.loop.inbox import user_message
    from dshctl.agents.session.store import SessionNotFound
    try:
        parent = await runtime.ctx.agents.open(parent_id)
    except SessionNotFound:
        return
    start = max((i for i, e in enumerate(events) if e["type"] == "turn/start"), default=0)
    own = events[start:]
    content, source = outcome.settlement_notice(child_id, outcome.epoch_stop_reason(own), outcome.final_output(own))
    parent.followup(user_message(content, source))
