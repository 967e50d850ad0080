"""What a reader checks before it trusts a session artifact (issue 28).

dsh writes every ``.jsonl.zstd`` frame with a content checksum (``ZSTD_c_checksumFlag``), so a
complete frame without one was not written by dsh or dshctl: it is refused rather than read
unchecked. A plain ``.jsonl`` has no checksum at all, so each event read back gets the same checks an
append gets (envelope, message shape, core payload): a bit flip that leaves valid JSON but not a
valid event is reported where it is, not trusted.
"""
from __future__ import annotations

from dshctl.agents.session.validate import (EventRejected, check_core_payload, check_envelope,
                                            check_message_shape)

_CHECKSUM_FLAG = 0x04  # Frame_Header_Descriptor bit 2 (RFC 8878, 3.1.1.1.1)


def frame_checksummed(buf: bytes, start: int) -> bool:
    """Whether the frame starting at ``start`` (magic already checked) carries a content checksum."""
    return len(buf) > start + 4 and bool(buf[start + 4] & _CHECKSUM_FLAG)


def event_problem(event: object) -> str | None:
    """Why ``event`` would not have been accepted by an append, or None."""
    try:
        check_envelope(event)
        check_message_shape(event)
        check_core_payload(event)
    except EventRejected as exc:
        return str(exc)
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
