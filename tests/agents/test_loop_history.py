"""The loop's incremental history view is exactly derive_history of the log, whatever was appended
(including surface rewrites, which fall back to the full fold)."""
from hypothesis import given, settings, strategies as st

from dshctl.agents.loop.history_view import HistoryView
from dshctl.agents.session.history import derive_history, latest_request_header, surface_nodes


def user(seq, text):
    return {"type": "user/message", "seq": seq, "time": 0, "surfaceOp": "append",
            "data": {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": text}],
                     "source": {"kind": "user"}}}


def assistant(seq, text):
    content = [{"type": "text", "text": text}] if text else []
    return {"type": "assistant/message", "seq": seq, "time": 0, "surfaceOp": "append",
            "data": {"turn": 1, "step": 1, "message": {"id": f"a{seq}", "role": "assistant", "content": content,
                                                       "source": {"kind": "model", "provider": "p", "model": "m"}}}}


def header(seq, model):
    return {"type": "request/header", "seq": seq, "time": 0,
            "data": {"header": {"config": {"provider": "p", "model": model}}, "reason": "change"}}


def replace(seq, events, text):
    surface = [e["seq"] for e in surface_nodes(events)]
    event = user(seq, text)
    event["surfaceOp"] = {"start": surface[0], "end": surface[-1]}
    return event


OPS = st.lists(st.tuples(st.sampled_from(["user", "assistant", "empty", "header", "chunk", "replace", "look"]),
                         st.text(min_size=1, max_size=5)), max_size=40)


@settings(max_examples=200)
@given(OPS)
def test_incremental_view_equals_the_full_fold(ops):
    events, view = [], HistoryView()
    for kind, text in ops:
        seq = len(events)
        if kind == "user":
            events.append(user(seq, text))
        elif kind == "assistant":
            events.append(assistant(seq, text))
        elif kind == "empty":
            events.append(assistant(seq, ""))
        elif kind == "header":
            events.append(header(seq, text))
        elif kind == "chunk":
            events.append({"type": "assistant/chunk", "seq": seq, "time": 0, "data": {}})
        elif kind == "replace" and surface_nodes(events):
            events.append(replace(seq, events, text))
        assert view.messages(events) == derive_history(events)
        assert view.header(events) == latest_request_header(events)


def _checked(trace, event):
    trace.accept(trace.check(event))
    return event


@settings(max_examples=200)
@given(OPS, st.integers(0, 40))
def test_a_view_seeded_from_the_validated_surface_equals_the_full_fold(ops, restart_at):
    """A restored agent's view starts from the log's surface (LogTrace keeps it, surface rewrites
    included), then folds what is appended after: at every point it is derive_history of the log."""
    from dshctl.agents.session.trace import LogTrace
    events, trace, view = [], LogTrace(nested=False), None
    for n, (kind, text) in enumerate(ops):
        seq = len(events)
        if n == restart_at:
            view = HistoryView.seeded(events, list(trace.surface))
        if kind == "user":
            events.append(_checked(trace, user(seq, text)))
        elif kind == "assistant":
            events.append(_checked(trace, assistant(seq, text)))
        elif kind == "empty":
            events.append(_checked(trace, assistant(seq, "")))
        elif kind == "header":
            events.append(_checked(trace, header(seq, text)))
        elif kind == "chunk":
            events.append(_checked(trace, {"type": "assistant/chunk", "seq": seq, "time": 0, "data": {}}))
        elif kind == "replace" and trace.surface:
            lo = len(text) % len(trace.surface)                      # any run of the surface
            hi = lo + ord(text[0]) % (len(trace.surface) - lo)
            event = user(seq, text)
            event["surfaceOp"] = {"op": "replace", "start": trace.surface[lo], "end": trace.surface[hi]}
            event["sourceEventSeqs"] = trace.surface[lo:hi + 1]
            events.append(_checked(trace, event))
        if view is not None:
            assert view.messages(events) == derive_history(events)
            assert view.header(events) == latest_request_header(events)
    assert HistoryView.seeded(events, list(trace.surface)).messages(events) == derive_history(events)
