"""Every event is checked when it is appended, so a bad event fails at its source, never at restore.

The rules are dsh's: the data is lossless JSON (``json.ts``); a message-carrying event holds an
identified message of the right role and source (``Session.append``); surface metadata only where it
is allowed and consistent with the surface so far (``surface.ts``); turns, steps and tool calls nest
as the session invariant companion demands (``invariant.ts``). One more rule is ours: a type dsh does
not know must be marked ``ignorable``, since dsh refuses to resume a log with an unknown required
event, and dsh must be able to read what we write.
"""
from __future__ import annotations

import math
from typing import Any

KNOWN_EVENT_TYPES = frozenset("""
agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result llm/retry
llm/retry-started permission/preset plan/mode request/context request/header sandbox/mode
schedule/change session/end-seed session/title session/title-llm-request step/end step/start
subagent/descriptor team/member team/message/delivered team/message/queued team/task todo/write
tool-workflow/agent-end tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start
tool/call tool/code-dispatch tool/code-dispatch-start tool/result turn/end turn/start user/message
web/deepseek-search-llm-request
""".split())
SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
TURN_ENCLOSED = frozenset({"todo/write", "request/header", "request/context"})
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
MAX_SAFE = 2 ** 53 - 1


class EventRejected(ValueError):
    """An event that must not enter the log; the message says which rule it breaks."""


def json_problem(value: Any, path: str = "data") -> str | None:
    """Why ``value`` would not survive a JSON round trip unchanged, or None when it would."""
    stack = [(value, path)]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if item is None or isinstance(item, (bool, str)):
            continue
        if type(item) is int:
            continue
        if type(item) is float:
            if not math.isfinite(item) or (item == 0.0 and math.copysign(1.0, item) < 0):
                return f"{where} is {item!r} (not representable in JSON)"
            continue
        if type(item) is list:
            if id(item) in seen:
                return f"{where} is a repeated or cyclic reference"
            seen.add(id(item))
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
            continue
        if type(item) is dict:
            if id(item) in seen:
                return f"{where} is a repeated or cyclic reference"
            seen.add(id(item))
            for key, v in item.items():
                if not isinstance(key, str):
                    return f"{where} has a non-string key {key!r}"
                stack.append((v, f"{where}.{key}"))
            continue
        return f"{where} is a {type(item).__name__} (not plain JSON)"
    return None


class NotPlain(Exception):
    """``value`` would not survive a JSON round trip; ``str(exc)`` says where and why."""


class _NotPlain(Exception):
    pass


_PLAIN_SCALARS = (str, int, bool, type(None))


def plain_copy(value: Any, path: str = "data") -> Any:
    """A copy of ``value`` equal to its JSON round trip (``json.loads(dumps(value))``), made in one walk;
    raises :class:`NotPlain` with ``json_problem``'s words when it would not survive the trip.
    (The round trip through the encoder, plus ``json_problem``'s walk with a path per item, was most
    of an append's cost.)"""
    try:
        return _copy(value, set())
    except _NotPlain:
        pass
    raise NotPlain(json_problem(value, path) or f"{path} is not plain JSON")


def _copy(item: Any, seen: set) -> Any:
    kind = type(item)
    if kind in _PLAIN_SCALARS:
        return item
    if kind is float:
        if not math.isfinite(item) or (item == 0.0 and math.copysign(1.0, item) < 0):
            raise _NotPlain
        return item
    if kind is dict:
        if id(item) in seen:
            raise _NotPlain
        seen.add(id(item))
        out = {}
        for key, v in item.items():
            if type(key) is not str:
                if not isinstance(key, str):
                    raise _NotPlain
                key = str(key)
            out[key] = v if type(v) in _PLAIN_SCALARS else _copy(v, seen)
        return out
    if kind is list:
        if id(item) in seen:
            raise _NotPlain
        seen.add(id(item))
        return [v if type(v) in _PLAIN_SCALARS else _copy(v, seen) for v in item]
    if isinstance(item, str):
        return str(item)      # a str subclass: the round trip gives a plain str
    raise _NotPlain


def _is_seq(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _provider_model(value: Any) -> bool:
    return isinstance(value, dict) and _nonempty_str(value.get("provider")) and _nonempty_str(value.get("model"))


def check_message_shape(event: dict) -> None:
    """A message-carrying event holds an identified message with the role and source its type needs."""
    kind = event["type"]
    if kind not in SURFACE_TYPES:
        return
    subject = f'session event "{kind}"'
    data = event.get("data")
    message = data if kind == "user/message" else (data.get("message") if isinstance(data, dict) else None)
    if not isinstance(message, dict) or not _nonempty_str(message.get("id")):
        raise EventRejected(f"{subject} lacks an identified message (a message needs a non-empty id)")
    role = "assistant" if kind == "assistant/message" else "user"
    if message.get("role") != role:
        raise EventRejected(f'{subject} message must have role "{role}"')
    source = message.get("source")
    if not isinstance(source, dict) or not _nonempty_str(source.get("kind")):
        raise EventRejected(f"{subject} message has invalid source")
    content = message.get("content")
    if not isinstance(content, list):
        raise EventRejected(f"{subject} message has invalid content")
    if kind == "assistant/message":
        if source["kind"] != "model" or not _provider_model(source):
            raise EventRejected(f"{subject} message must have model source")
        return
    if kind == "tool/result":
        if source["kind"] != "tool" or not _nonempty_str(source.get("callId")):
            raise EventRejected(f"{subject} message must have tool source")
        block = content[0] if len(content) == 1 else None
        if not isinstance(block, dict) or block.get("type") != "tool-result" \
                or not isinstance(block.get("content"), list):
            raise EventRejected(f"{subject} message must contain one tool-result block")
        if block.get("toolCallId") != source["callId"]:
            raise EventRejected(f"{subject} message has mismatched tool call ids")


_ENVELOPE = frozenset({"type", "seq", "time", "data"})
_ENVELOPE_ALL = _ENVELOPE | {"ignorable", "surfaceOp", "sourceEventSeqs"}


def check_envelope(event: Any) -> None:
    """The envelope ``{type, seq, time, data, ignorable?, surfaceOp?, sourceEventSeqs?}``."""
    if type(event) is not dict:
        raise EventRejected("invalid event envelope (an event is a JSON object)")
    kind, seq, when = event.get("type"), event.get("seq"), event.get("time")
    if type(kind) is not str or not kind or type(seq) is not int or seq < 0 or type(when) is not int \
            or "data" not in event:
        raise EventRejected("invalid event envelope (needs type, seq, time and data)")
    if event.keys() != _ENVELOPE:
        extra = event.keys() - _ENVELOPE_ALL
        if extra:
            raise EventRejected(f"event {kind!r} has unknown envelope keys: {', '.join(sorted(extra))}")
        if "ignorable" in event and event["ignorable"] is not True:
            raise EventRejected("ignorable must be true when present")
    if kind == "request/header-delta":
        raise EventRejected('session event "request/header-delta" is the unsupported legacy header format')
    if kind == "request/header" and isinstance(event["data"], dict) and event["data"].get("reason") == "fallback":
        raise EventRejected('session event "request/header" uses the unsupported legacy reason "fallback"')


# The payload fields dsh's core event types declare (``SessionEventMap``), by type.
CORE_PAYLOADS: dict[str, dict[str, type]] = {
    "turn/start": {"turn": int},
    "turn/end": {"turn": int, "reason": dict},
    "step/start": {"turn": int, "step": int},
    "step/end": {"turn": int, "step": int},
    "assistant/chunk": {"turn": int, "step": int, "chunk": dict},
    "assistant/message": {"turn": int, "step": int, "message": dict},
    "tool/call": {"turn": int, "step": int, "callId": str, "name": str, "arguments": str},
    "tool/result": {"turn": int, "step": int, "message": dict},
    "request/header": {"header": dict, "reason": str},
    "todo/write": {"todos": list},
}


def check_core_payload(event: dict) -> None:
    """The fields a core event type must carry, with their JSON types."""
    fields = CORE_PAYLOADS.get(event["type"])
    if fields is None:
        return
    data = event["data"]
    if type(data) is not dict:
        raise EventRejected(f'session event "{event["type"]}" needs an object as data')
    for key, kind in fields.items():
        if type(data.get(key)) is not kind:
            raise EventRejected(f'session event "{event["type"]}" needs {key} ({kind.__name__})')
    if event["type"] == "turn/end" and type(data["reason"].get("kind")) is not str:
        raise EventRejected("turn/end needs a reason {kind: ...}")
    if event["type"] == "assistant/chunk" and type(data["chunk"].get("type")) is not str:
        raise EventRejected("assistant/chunk needs a chunk with a type")
    if event["type"] == "request/header" and type(data["header"].get("config")) is not dict:
        raise EventRejected("request/header needs a header with a config")
