"""``@dshctl/loop-guard``: the community loop-guard protocol on ``agent/turn-stopping``.

Three limits, each on the row's config: ``maxRounds`` steps per turn; ``noProgressSteps`` consecutive
steps that change nothing (the same tool calls with the same results as the step before); the breaker,
``sameErrorLimit`` times the same tool error in one turn. A tripped limit stops the turn (``turn/end``
reason ``aborted``, cause ``hook`` with the guard's sentence), and the sentence always says the way out:
a new instruction starts a fresh turn with fresh limits.
"""
from __future__ import annotations

import json

name = "@dshctl/loop-guard"
schema = {"type": "object", "default": {}, "properties": {
    "maxRounds": {"type": "integer", "minimum": 1, "default": 25},
    "noProgressSteps": {"type": "integer", "minimum": 1, "default": 2},
    "sameErrorLimit": {"type": "integer", "minimum": 1, "default": 2},
}}

WAY_OUT = "send a new instruction to continue (a new turn starts with fresh limits)"


def step_events(events: list[dict], turn: int, step: int) -> list[dict]:
    out = []
    for event in reversed(events):
        if event["type"] == "step/start" and event["data"] == {"turn": turn, "step": step}:
            break
        out.append(event)
    return out[::-1]


def fingerprint(events: list[dict]) -> tuple[str, list[str]]:
    """What a step did (its calls and their results) and the error texts it produced."""
    calls, results, errors = [], [], []
    for event in events:
        if event["type"] == "tool/call":
            calls.append([event["data"]["name"], event["data"]["arguments"]])
        elif event["type"] == "tool/result":
            block = event["data"]["message"]["content"][0]
            text = json.dumps(block["content"], sort_keys=True)
            results.append(text)
            if block.get("isError"):
                errors.append(text)
    return json.dumps([calls, results]), errors


class LoopGuard:
    def __init__(self, config: dict):
        self.config = config
        self.state: dict[str, dict] = {}     # agent id -> this turn's tallies

    def check(self, payload: dict):
        agent, turn, step = payload["agent"], payload["turn"], payload["step"]
        state = self.state.get(agent.id)
        if state is None or state["turn"] != turn:
            state = self.state[agent.id] = {"turn": turn, "last": None, "same": 0, "errors": {}}
        if payload.get("stopping"):
            return None
        print_, errors = fingerprint(step_events(agent.session.events, turn, step))
        state["same"] = state["same"] + 1 if print_ == state["last"] else 0
        state["last"] = print_
        for text in errors:
            state["errors"][text] = state["errors"].get(text, 0) + 1
        cfg = self.config
        if step >= cfg["maxRounds"]:
            return _stop(f"round limit of {cfg['maxRounds']} steps reached")
        if state["same"] >= cfg["noProgressSteps"]:
            return _stop(f"{cfg['noProgressSteps']} steps in a row made no progress (same calls, same results)")
        repeated = [t for t, n in state["errors"].items() if n >= cfg["sameErrorLimit"]]
        if repeated:
            return _stop(f"the same tool error came back {cfg['sameErrorLimit']} times: {_brief(repeated[0])}")
        return None

    def forget(self, payload: dict) -> None:
        self.state.pop(getattr(payload.get("agent"), "id", None), None)


def _brief(text: str) -> str:
    try:
        blocks = json.loads(text)
        text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
    except ValueError:
        pass
    return text[:160]


def _stop(why: str) -> dict:
    return {"kind": "stop", "reason": f"loop-guard: {why}; {WAY_OUT}"}


def apply(ctx, config):
    guard = LoopGuard(config)
    ctx.on("agent/turn-stopping", guard.check)
