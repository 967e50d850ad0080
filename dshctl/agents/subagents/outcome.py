"""A child's outcome read from its own log: final output, stop reason, and the texts dsh shows for them."""
from __future__ import annotations

_ONE_SHOT = {"completed": "completed", "max-tokens": "max-tokens", "aborted": "aborted", "blocked": "refusal"}
_EPOCH = {"completed": "completed", "max-tokens": "max-tokens", "aborted": "aborted", "interrupted": "aborted",
          "error": "error", "blocked": "refusal"}


def final_output(events) -> list[dict]:
    """The content of the last non-empty assistant message, else the streamed text, else ``[]``."""
    message, partial = None, []
    for event in events:
        if event["type"] == "assistant/message":
            content = event["data"]["message"].get("content") or []
            if content:
                message = content
        elif event["type"] == "assistant/chunk":
            for chunk in _chunks(event["data"]):
                if chunk.get("type") == "text-delta" and chunk.get("text"):
                    partial.append(chunk["text"])
    if message is not None:
        return message
    text = "".join(partial)
    return [{"type": "text", "text": text}] if text else []


def _chunks(data) -> list[dict]:
    chunk = data.get("chunk") if isinstance(data, dict) else None
    if isinstance(chunk, dict):
        return [chunk]
    chunks = data.get("chunks") if isinstance(data, dict) else None   # a packed row
    return [c for c in chunks or [] if isinstance(c, dict)]


def _last_end(events):
    return next((e["data"]["reason"] for e in reversed(events) if e["type"] == "turn/end"), None)


def run_stop_reason(events, cancelled: bool) -> str:
    """A one-shot run: a cut (interrupted) or missing turn is an error; cancellation wins over failure."""
    reason = _last_end(events)
    recorded = _ONE_SHOT.get((reason or {}).get("kind"), "error")
    return "aborted" if cancelled and recorded != "completed" else recorded


def epoch_stop_reason(events) -> str:
    """A continuable child's activation: the last turn's end, ``completed`` with no turn at all."""
    reason = _last_end(events)
    return "completed" if reason is None else _EPOCH.get(reason.get("kind"), "error")


def text_of(blocks) -> str:
    return "".join(b.get("text", "") for b in blocks or [] if b.get("type") == "text")


def stop_reason_error(stop_reason: str) -> str | None:
    return {"completed": None, "aborted": "subagent run was cancelled", "error": "subagent run failed",
            "max-tokens": "subagent run hit its token limit before finishing",
            "refusal": "subagent declined the task"}.get(
        stop_reason, f"subagent run ended abnormally ({stop_reason})")


def failure_text(result: dict) -> str:
    text = stop_reason_error(result["stopReason"]) or ""
    if result.get("diagnostic"):
        text += f"\nDiagnostic: {result['diagnostic']}"
    partial = text_of(result["output"])
    if partial:
        text += f"\nPartial output before the run ended:\n{partial}"
    return text


def settlement_summary(child_id: str, stop_reason: str) -> str:
    subject = f"Background subagent {child_id}"
    return {
        "completed": f"{subject} finished and will do no further work unless you send it more.",
        "aborted": f"{subject} was stopped before it finished.",
        "max-tokens": f"{subject} ran out of room before it finished.",
        "refusal": f"{subject} declined the task.",
        "error": f"{subject} failed before it finished.",
    }.get(stop_reason, f"{subject} ended abnormally ({stop_reason}) before it finished.")


def settlement_notice(child_id: str, stop_reason: str, output: list[dict] | None) -> tuple[list[dict], dict]:
    """(content, source) of the user-role notice a parent receives when a continuable child settles."""
    summary = settlement_summary(child_id, stop_reason)
    tail = ([{"type": "text", "text": "Its closing message:"}, *output] if output
            else [{"type": "text", "text": "It left no closing message."}])
    source = {"kind": "subagent-settled", "form": "notice", "summary": summary, "senderSessionId": child_id}
    return [{"type": "text", "text": summary}, *tail], source
