"""The contract of the session log (dsh: ``@deepseek-ai/dsh-session`` types, ``session-persistence-jsonl``).

An event is ``{"type", "seq", "time", "data", "ignorable"?: true, "sourceEventSeqs"?, "surfaceOp"?}``
with dsh's payloads (``turn/start {turn}``, ``turn/end {turn, reason}``, ``step/start {turn, step}``,
``user/message <Message>``, ``assistant/chunk {turn, step, chunk}``, ``assistant/message {turn, step,
message, usage?, interrupted?}``, ``tool/call {turn, step, callId, name, arguments}``, ``tool/result
{turn, step, message, error?, meta?}``, ``request/header {header, reason}``, ``agent-preset/selected``,
``session/end-seed {}`` …). The header is dsh's ``SessionHeader`` (``version`` 0, ``id``, ``createdAt``,
``cwd``?, ``agentPreset``? …).

Implementations live in ``store.py``/``log.py``/``history.py``; the names below are what the agent loop,
the CLI and Code Mode call.

    store = SessionStore(home)                      # sessions under the home, where dsh keeps them
    log = store.create(cwd=..., agent_preset=...)   # -> SessionLog (header written durably), id session-<uuid>
    store.resolve("3f2a")                           # -> the one id it starts (with or without "session-")
    log = store.open(session_id)                    # restore: torn tail repaired, events validated
    store.list()                                    # -> [SessionInfo]: header fields, no event bodies
    event = log.append("tool/call", {...})          # validated now (refused if malformed), seq/time set
    log.commit()                                    # one durable batch (one zstd frame): a turn commit
    log.events                                      # list of events, in seq order
    derive_history(log.events) -> list[Message]     # what the model sees, from the log alone
    latest_request_header(log.events) -> dict|None  # the newest request/header snapshot
"""
from __future__ import annotations

SESSION_FORMAT_VERSION = 0

_IMPLEMENTATIONS = {
    "SessionStore": "dshctl.agents.session.store", "SessionInfo": "dshctl.agents.session.store",
    "SessionRead": "dshctl.agents.session.store", "SessionNotFound": "dshctl.agents.session.store",
    "AmbiguousSessionId": "dshctl.agents.session.store", "new_session_id": "dshctl.agents.session.store",
    "SessionLog": "dshctl.agents.session.log", "SessionBusy": "dshctl.agents.session.log",
    "EventRejected": "dshctl.agents.session.validate", "CorruptLog": "dshctl.agents.session.reader",
    "derive_history": "dshctl.agents.session.history",
    "latest_request_header": "dshctl.agents.session.history",
    "latest_agent_preset": "dshctl.agents.session.history",
}


def __getattr__(name: str):
    """The implementations, imported on first use (zstandard is not loaded for the contract alone)."""
    module = _IMPLEMENTATIONS.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib
    return getattr(importlib.import_module(module), name)
