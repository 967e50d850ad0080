"""The durable ``subagent/descriptor`` event (version 2): how a child was made, read back by discovery.

One-shot: ``{version, mode: "one-shot", provider, label?}``. Continuable adds a required ``label`` and the
optional ``agentProvider``, ``agentModel``, ``persona``, ``toolFilter`` — the composition a cold resume
must reproduce. A descriptor of another version is not ours to interpret (None); a malformed one is an
error naming the field, as dsh's fold rejects it.
"""
from __future__ import annotations

VERSION = 2
EVENT = "subagent/descriptor"
_BASE = ("version", "mode", "provider", "label")
_CONTINUABLE = _BASE + ("agentProvider", "agentModel", "persona", "toolFilter")


class BadDescriptor(ValueError):
    pass


def snapshot(mode: str, provider: str, label: str | None = None, **composition) -> dict:
    if mode not in ("one-shot", "continuable"):
        raise BadDescriptor(f'subagent descriptor mode must be "one-shot" or "continuable", not {mode!r}')
    if mode == "continuable" and label is None:
        raise BadDescriptor("a continuable subagent descriptor needs a label")
    out = {"version": VERSION, "mode": mode, "provider": provider}
    if label is not None:
        out["label"] = label
    if mode == "continuable":
        out.update({k: v for k, v in composition.items() if k in _CONTINUABLE and v is not None})
    return out


def parse(data) -> dict | None:
    if not isinstance(data, dict):
        raise BadDescriptor("persisted subagent descriptor payload must be an object")
    if not isinstance(data.get("version"), (int, float)) or isinstance(data.get("version"), bool):
        raise BadDescriptor("persisted subagent descriptor version must be a number")
    if data["version"] != VERSION:
        return None
    mode = data.get("mode")
    if mode not in ("one-shot", "continuable"):
        raise BadDescriptor('persisted subagent descriptor mode must be "one-shot" or "continuable"')
    allowed = _BASE if mode == "one-shot" else _CONTINUABLE
    unknown = next((k for k in data if k not in allowed), None)
    if unknown is not None:
        raise BadDescriptor(f'persisted subagent descriptor payload has unknown field "{unknown}"')
    for key in ("provider", "label", "agentProvider", "agentModel", "persona"):
        if key in data and not isinstance(data[key], str):
            raise BadDescriptor(f"persisted subagent descriptor {key} must be a string")
    if not isinstance(data.get("provider"), str):
        raise BadDescriptor("persisted subagent descriptor provider must be a string")
    if mode == "continuable" and "label" not in data:
        raise BadDescriptor("persisted subagent descriptor label must be a string")
    return dict(data)


def fold(events) -> dict | None:
    """The first descriptor of a log, parsed (None when there is none or it is another version)."""
    for event in events:
        if event.get("type") == EVENT:
            return parse(event.get("data"))
    return None
