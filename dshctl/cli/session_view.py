"""The text form of `dshctl session show`: header lines, then each turn as a short transcript."""
from __future__ import annotations

import datetime as _dt

from dshctl.cli.common import console

CLIP = 400


def _clip(text: str, limit: int = CLIP, *, one_line: bool = False) -> str:
    text = " ".join(text.split()) if one_line else text.strip()
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def when(ms) -> str:
    if ms is None:
        return "?"
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def print_session(seen, summary: list[dict], state: dict, prices: dict | None = None) -> None:
    from dshctl.agents.session.summary import describe_reason

    lines: list[str] = []
    header = seen.header
    say = lines.append
    say(f"session  {header['id']}")
    if state["title"]:
        say(f"title    {_clip(state['title']['title'], 120, one_line=True)}")
    say(f"created  {when(header.get('createdAt'))}")
    for label, key in (("cwd", "cwd"), ("preset", "agentPreset"), ("parent", "parentSession")):
        if key in header:
            say(f"{label:<8} {header[key]}")
    say(f"file     {seen.path}")
    knobs = state["knobs"]
    if any(v is not None for v in knobs.values()):
        say("policy   " + ", ".join(f"{name} {value}" for name, value in
                                    (("permissions", knobs["preset"]), ("sandbox", knobs["sandbox"]),
                                     ("approval", knobs["approval"])) if value is not None))
    route = state["requestContext"]
    if route:
        window = f" ({route['contextWindow']} tokens)" if route.get("contextWindow") else ""
        say(f"model    {route.get('provider')}/{route.get('model')}{window}")
    say(f"events   {len(seen.events)}   turns {len(summary)}")
    steps = steps_by_turn(seen.events)
    priced = _usage_by_turn(seen.events) if prices else {}
    if seen.torn_bytes:
        say(f"note     a torn tail of {seen.torn_bytes} bytes (a crash during an append); a resume cuts it")
    queued = len(state["inbox"]["nextTurn"]) + len(state["inbox"]["nextStep"])
    if queued:
        say(f"note     {queued} message(s) queued in the inbox, not yet taken by a turn")
    if seen.closers:
        say(f"note     the last turn is open; a resume closes it as interrupted ({len(seen.closers)} closers)")
    for turn in summary:
        say("")
        usage = turn["usage"]
        say(f"turn {turn['turn']}  ({turn['steps']} step(s), {describe_reason(turn['end'])}, "
            f"{usage['inputTokens']} in / {usage['outputTokens']} out tokens{_cost(priced, turn['turn'], prices)})")
        if turn["prompt"]:
            say(f"  user: {_clip(turn['prompt'])}")
        tools = iter(turn["tools"])
        for step_text, calls in steps.get(turn["turn"], ()):
            if step_text:
                say(f"  assistant: {_clip(step_text)}")
            for tool in (next(tools, None) for _ in range(calls)):
                if tool is not None:
                    say(tool_line(tool))
        for tool in tools:                    # calls logged without their assistant message (a torn turn)
            say(tool_line(tool))
    # one print: rich's per-call work (~0.15 ms a line) was most of a long session's cost (issue 30)
    console().print("\n".join(lines), markup=False, highlight=False)  # user data, no markup


def _usage_by_turn(events):
    from dshctl.cli.session_prices import usage_by_turn
    return usage_by_turn(events)


def _cost(priced: dict, turn: int, prices: dict | None) -> str:
    if not prices:
        return ""
    from dshctl.cli.session_prices import cost_of
    return f", cost {cost_of(priced.get(turn, {}), prices):.6f} {prices.get('currency', 'USD')}"


def tool_line(tool: dict) -> str:
    result = "(no result)" if tool["result"] is None else _clip(tool["result"], 120, one_line=True)
    mark = " [error]" if tool.get("isError") else ""
    return f"  tool: {tool['name']} {_clip(tool['arguments'], 120, one_line=True)} -> {result}{mark}"


def steps_of(events: list[dict], turn: int) -> list[tuple[str, int]]:
    """Each step's assistant text and how many tools it called, in order: the texts of a turn's steps
    are shown apart, each before the calls it made."""
    return steps_by_turn(events).get(turn, [])


def steps_by_turn(events: list[dict]) -> dict:
    """:func:`steps_of` for every turn in one pass over the log (per turn it was quadratic)."""
    out: dict = {}
    for event in events:
        data = event.get("data")
        if event.get("type") != "assistant/message" or not isinstance(data, dict):
            continue
        blocks = [b for b in (data.get("message") or {}).get("content") or [] if isinstance(b, dict)]
        text = "".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
        try:
            out.setdefault(data.get("turn"), []).append((text, sum(1 for b in blocks if b.get("type") == "tool-call")))
        except TypeError:   # an unhashable turn never equals a summary's turn number
            continue
    return out


def print_family(store, fmt: str) -> None:
    """``session list --tree``: each root with its sub-agents indented under it."""
    from dshctl.agents.subagents.family import families, flatten, to_json
    from dshctl.cli.common import print_json
    from dshctl.cli.preset_view import print_table

    roots = families(store)
    if fmt == "json":
        print_json(to_json(roots))
        return
    rows = []
    for depth, node in flatten(roots):
        info, detail = node["info"], node["detail"]
        ident = ("  " * (depth - 1) + "└ " if depth else "") + (info.id or info.path.parent.name)
        rows.append([ident, when(info.header.get("createdAt")), detail.get("label", "-"),
                     detail.get("model", "-"), detail.get("state", "-") if depth else "-",
                     detail.get("stopReason", "-")])
    print_table(["ID", "CREATED", "LABEL", "MODEL", "STATE", "STOP"], rows)
