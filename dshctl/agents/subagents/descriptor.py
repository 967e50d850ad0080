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


def _string(data: dict, key: str, *, required: bool = False) -> None:
    if (required or key in data) and not isinstance(data.get(key), str):
        raise BadDescriptor(f"persisted subagent descriptor {key} must be a string")


def _tool_filter(value) -> dict:
    if not isinstance(value, dict):
        raise BadDescriptor("persisted subagent descriptor toolFilter must be an object")
    unknown = next((k for k in value if k not in ("allow", "deny")), None)
    if unknown is not None:
        raise BadDescriptor(f'persisted subagent descriptor toolFilter has unknown field "{unknown}"')
    for key in ("allow", "deny"):
        if key in value and not (isinstance(value[key], list) and all(isinstance(x, str) for x in value[key])):
            raise BadDescriptor(f"persisted subagent descriptor toolFilter.{key} must be an array of strings")
    if not value:
        raise BadDescriptor("persisted subagent descriptor toolFilter must declare allow and/or deny")
    return dict(value)


def parse(data) -> dict | None:
    """The descriptor in ``data``, checked in dsh's order (so the first problem named is dsh's)."""
    if not isinstance(data, dict):
        raise BadDescriptor("persisted subagent descriptor payload must be an object")
    version = data.get("version")
    if not isinstance(version, (int, float)) or isinstance(version, bool):
        raise BadDescriptor("persisted subagent descriptor version must be a number")
    if version != VERSION:
        return None
    mode = data.get("mode")
    if mode not in ("one-shot", "continuable"):
        raise BadDescriptor('persisted subagent descriptor mode must be "one-shot" or "continuable"')
    allowed = _BASE if mode == "one-shot" else _CONTINUABLE
    unknown = next((k for k in data if k not in allowed), None)
    if unknown is not None:
        raise BadDescriptor(f'persisted subagent descriptor payload has unknown field "{unknown}"')
    _string(data, "provider", required=True)
    _string(data, "label", required=mode == "continuable")
    out = dict(data, version=VERSION)
    if mode == "continuable":
        for key in ("agentProvider", "agentModel", "persona"):
            _string(data, key)
        if "toolFilter" in data:
            out["toolFilter"] = _tool_filter(data["toolFilter"])
    return out


def fold(events) -> dict | None:
    """The first descriptor of a log, parsed (None when there is none or it is another version)."""
    for event in events:
        if event.get("type") == EVENT:
            return parse(event.get("data"))
    return None
