"""A session's sub-agents as its conversation shows them: one row per child, at the tool call that
started it — ``{"id", "callId", "label", "mode", "model", "state", "stopReason"}`` (the page merges
rows by id, so a row may carry only what changed).

Live, the ``subagent/start`` / ``subagent/end`` events name the delegating call (``toolCallId``) and
a child's ``agent/status`` its running/idle. For a page that opens later the rows come from the store
(children are the sessions whose header names this one as ``parentSession``) and the calls from the
parent's log: a ``subagent`` call's result says ``started subagent <id>``; ``subagent_fork`` children
are paired with the fork calls in order (a one-shot child's result is its text, not its id).
"""
from __future__ import annotations

import re

from dshctl.agents.subagents import descriptor as descriptors

STARTED = re.compile(r"started subagent (\S+)")


def detail(events: list[dict]) -> dict:
    """Label, mode and model from a child's log, and the stop reason of its last turn."""
    try:
        found = descriptors.fold(events) or {}
    except descriptors.BadDescriptor:
        found = {}
    model = next((e["data"]["header"]["config"].get("model") for e in reversed(events)
                  if e["type"] == "request/header"), None)
    end = next((e["data"]["reason"]["kind"] for e in reversed(events) if e["type"] == "turn/end"), None)
    out = {"label": found.get("label"), "mode": found.get("mode"), "model": model, "stopReason": end}
    return {k: v for k, v in out.items() if v is not None}


def model_of(agent) -> str | None:
    """The model the agent's requests name: its own option, else the llm service's."""
    try:
        return (agent.options or {}).get("model") or getattr(agent.loop.llm(), "model", None)
    except Exception:  # noqa: BLE001 - no llm row right now: no model to show
        return None


def live_row(agent, call_id: str | None = None) -> dict:
    row = {"id": agent.id, **detail(agent.session.events), "state": agent.status}
    row.setdefault("model", model_of(agent))
    if call_id:
        row["callId"] = call_id
    return {k: v for k, v in row.items() if v is not None}


def call_links(parent_events: list[dict], forks: list[str]) -> dict[str, str]:
    """child id -> the id of the tool call that started it, as far as the parent's log tells."""
    links, fork_calls = {}, []
    for event in parent_events:
        data = event["data"]
        if event["type"] == "tool/call" and data.get("name") == "subagent_fork":
            fork_calls.append(data["callId"])
        elif event["type"] == "tool/result":
            for block in data["message"]["content"]:
                text = "".join(b.get("text", "") for b in block.get("content", []) if isinstance(b, dict))
                found = STARTED.match(text)
                if found:
                    links[found.group(1)] = block.get("toolCallId")
    links.update(zip(forks, fork_calls))
    return links


def stored_rows(store, live: dict, parent_id: str, parent_events: list[dict]) -> list[dict]:
    """Every child of ``parent_id`` the store holds (blocking: run it in a thread)."""
    infos = [i for i in store.list() if i.error is None and i.header.get("parentSession") == parent_id]
    infos.sort(key=lambda i: (i.header.get("createdAt", 0), i.id))
    rows = []
    for info in infos:
        agent = live.get(info.id)
        if agent is not None:
            rows.append(live_row(agent))
            continue
        try:
            seen = store.read(info.id)
        except Exception as exc:  # noqa: BLE001 - an unreadable child is shown with its error
            rows.append({"id": info.id, "state": "unreadable", "error": str(exc)})
            continue
        rows.append({"id": info.id, **detail(seen.events), "state": "cut" if seen.closers else "settled"})
    forks = [r["id"] for r in rows if r.get("mode") == "one-shot"]
    links = call_links(parent_events, forks)
    for row in rows:
        if links.get(row["id"]):
            row["callId"] = links[row["id"]]
    return rows
