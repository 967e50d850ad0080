"""Agent turns for clients of the host: ``{"op": "agent.run", "prompt", "session"?, "preset"?, "cwd"?,
"credentials"?}``. ``credentials`` (``{VAR: key}``, the variable the host's ``ping`` names as ``keyEnv``)
is the client's API key: the llm row uses it for this session's requests during the turn, in memory only.

``cwd`` (an absolute path; the client's working directory) is recorded in the header of a new session;
without it the host's own working directory is. Resuming a session keeps the cwd it was created with.

The answer is a stream of JSON lines on the same connection (docs/host.md): ``{"ok": true, "event":
<session event>}`` for every event of the turn as it is logged, ``{"ok": true, "ask": <question>}``
when a tool asks the user (the client replies with one line ``{"answer": {...}}``), and a last line
``{"ok": true, "done": true, "session", "reason", "text"}``. With a ``subagents`` service the stream
also carries ``{"ok": true, "subagent": {"event": "start" | "end", ...}}`` for the agent's children and
lasts until they have settled and the agent has taken their notices. A client line ``{"abort": true}``, or the
client going away, aborts the turn (cause ``user``). The same stream serves ``dshctl agent run`` in an
embedded host (no socket), so both paths behave the same.
"""
from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator


class TurnStream:
    """An async iterator of response lines; ``incoming`` takes the client's lines."""

    def __init__(self, host, request: dict):
        self.host = host
        self.request = request
        self.incoming: asyncio.Queue = asyncio.Queue()
        self.closed = asyncio.Event()            # set by the server when the client went away

    def __aiter__(self) -> AsyncIterator[dict]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[dict]:
        request = self.request
        credentials = request.pop("credentials", None)   # the client's key: held in memory for this turn only
        prompt = request.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            yield {"ok": False, "error": 'agent.run needs a non-empty "prompt" string'}
            return
        agents = self.host.root.get("agents")
        if agents is None:
            yield {"ok": False, "error": "no agents service runs in this profile (add the @dshctl/agents, "
                                         "@dshctl/agent-loop and an llm row)"}
            return
        problem = permission_values_problem(request)
        if problem is not None:                 # refused before a session is opened or created
            yield {"ok": False, "error": problem, "hint": "permission presets: workspace-write, "
                                                          "danger-full-access; approval policies: ask, never"}
            return
        try:
            agent = await agents.open(request.get("session"), preset=request.get("preset"),
                                      cwd=request.get("cwd"))
        except Exception as exc:  # noqa: BLE001 - unknown session, busy session, missing preset, no loop
            yield {"ok": False, "error": str(exc) or type(exc).__name__, "hint": open_hint(exc)}
            return
        if isinstance(request.get("model"), str) and request["model"]:
            agent.options["model"] = request["model"]     # --model / /model: this session's turns from now on
        start = 0 if request.get("session") is None else len(agent.session.events)
        problem = choose_permissions(self.host.root, agent, request)
        if problem is not None:
            yield {"ok": False, "error": problem, "hint": "permission presets: workspace-write, danger-full-access; "
                                                          "approval policies: ask, never"}
            return
        queue: asyncio.Queue = asyncio.Queue()
        for event in agent.session.events[start:]:
            queue.put_nowait({"ok": True, "event": event})
        observer = lambda event: queue.put_nowait({"ok": True, "event": event})  # noqa: E731
        agent.observers.append(observer)
        unwatch = watch_children(self.host.root, agent, queue)
        previous_asker = getattr(agent, "ask_user", None)
        agent.ask_user = lambda question: self._ask(queue, question)
        hold = getattr(agents, "hold", None)  # idle release (issue 28); a replacement may lack it
        lent = lend_client_key(self.host.root, agent, credentials)
        try:
            if hold is not None:
                hold(agent)
            agent.followup(prompt)
            subagents = self.host.root.get("subagents")
            idle = asyncio.ensure_future(agent.when_idle() if subagents is None else subagents.until_quiet(agent))
            async for line in self._pump(agent, queue, idle):
                yield line
        finally:
            unwatch()
            if lent is not None:
                lent.lend_key(agent.session.id, None)
            agent.observers.remove(observer)
            agent.ask_user = previous_asker
            if hold is not None:
                agents.let_go(agent)
        done = {"ok": True, "done": True, "session": agent.id, **turn_summary(agent.session.events[start:])}
        prices = _prices_of(agent)
        if prices:      # the client prices the turn's usage (docs/agents.md, "Cost")
            done["prices"] = prices
        yield done

    async def _pump(self, agent, queue: asyncio.Queue, idle: asyncio.Future):
        watch = asyncio.ensure_future(self._watch_client(agent))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, idle}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                while not queue.empty():
                    yield queue.get_nowait()
                return
        finally:
            watch.cancel()

    async def _watch_client(self, agent) -> None:
        """Client lines that are not answers: an abort request; the client closing aborts too."""
        closed = asyncio.ensure_future(self.closed.wait())
        getter = None
        try:
            while True:
                getter = asyncio.ensure_future(self.incoming.get())
                done, _ = await asyncio.wait({getter, closed}, return_when=asyncio.FIRST_COMPLETED)
                if closed in done:
                    getter.cancel()
                    agent.abort({"kind": "user"})
                    return
                line = getter.result()
                if isinstance(line, dict) and line.get("abort"):
                    agent.abort({"kind": "user"})
                elif isinstance(line, dict) and "answer" in line:
                    self._answers.put_nowait(line["answer"])
        finally:
            closed.cancel()
            if getter is not None:
                getter.cancel()  # a pending get per turn was left behind otherwise

    _answers_q: asyncio.Queue | None = None

    @property
    def _answers(self) -> asyncio.Queue:
        if self._answers_q is None:
            self._answers_q = asyncio.Queue()
        return self._answers_q

    async def _ask(self, queue: asyncio.Queue, question: dict) -> Any:
        queue.put_nowait({"ok": True, "ask": question})
        return await self._answers.get()


def lend_client_key(root, agent, credentials) -> Any:
    """The llm that now uses the client's key for this session's requests (None: the host's key applies).
    The key stays in the adapter's memory for the turn: not in the log, the host log or status."""
    llm = root.get("llm") if root is not None else None
    key_env = getattr(llm, "key_env", None)
    if not isinstance(credentials, dict) or not hasattr(llm, "lend_key") or not isinstance(key_env, str):
        return None
    key = credentials.get(key_env)
    if not isinstance(key, str) or not key:
        return None
    llm.lend_key(agent.session.id, key)
    return llm


def permission_values_problem(request: dict) -> str | None:
    """An unknown ``permissions`` preset or ``approval`` policy, as one line (None when both are fine)."""
    from dshctl.agents.approval.policy import APPROVAL_POLICIES, PRESETS
    preset, policy = request.get("permissions"), request.get("approval")
    if preset is not None and preset not in PRESETS:
        return f'unknown preset "{preset}" (available: {", ".join(PRESETS)})'      # apply_preset's words
    if policy is not None and policy not in APPROVAL_POLICIES:
        return 'approval policy must be one of "ask" or "never"'                    # set_policy's words
    return None


def choose_permissions(root, agent, request: dict) -> str | None:
    """``permissions`` (a preset) and ``approval`` (a policy) of the request, written to the session as
    its events (docs/sandbox.md); the problem as one line when they cannot be."""
    preset, policy = request.get("permissions"), request.get("approval")
    if preset is None and policy is None:
        return None
    approval = root.get("approval")
    if approval is None:
        return "no approval service runs in this profile (add an @dshctl/approval row)"
    from dshctl.agents.approval.plugin import apply_preset
    try:
        if preset is not None:
            apply_preset(root, approval, agent, str(preset))
        if policy is not None:
            approval.set_policy(agent, str(policy))
    except ValueError as exc:
        return str(exc)
    return None


def open_hint(exc: Exception) -> str:
    kind = type(exc).__name__
    if kind == "AmbiguousSessionId":
        return "give more characters of the id; `dshctl session list` shows the sessions"
    if kind == "BadSessionCwd":
        return 'send "cwd" as an absolute path, or leave it out for the host\'s working directory'
    if kind == "SessionNotFound":
        return "list the sessions with `dshctl session list`, or leave out --session to start one"
    if kind == "SessionBusy":
        return "another process has this session open; use the host that holds it, or wait for it to stop"
    if kind == "PresetNotAvailable":
        return "list the presets with `dshctl preset list`"
    if kind == "NoAgentLoop":
        return "the profile needs @dshctl/agents, @dshctl/agent-loop and an llm row"
    return "see the host's log for details"


def watch_children(root, agent, queue: asyncio.Queue):
    """Forward ``subagent/start`` / ``subagent/end`` of ``agent``'s children; returns the disposer."""
    def forward(kind):
        def listener(info):
            if info.get("parent") == agent.id:
                queue.put_nowait({"ok": True, "subagent": {"event": kind, **info}})
        return listener
    handles = [root.on("subagent/start", forward("start")), root.on("subagent/end", forward("end"))]
    return lambda: [handle() for handle in handles]


def turn_summary(events: list[dict]) -> dict:
    """The end reason and the text of the last assistant message of the first turn that ends in
    ``events`` (the session's events since the request came in, when the agent was idle). Not the
    session's last turn: a loop-runner's continuation starts as soon as the agent is idle and may
    already be streaming when this runs."""
    text = ""
    for event in events:
        if event["type"] == "assistant/message":
            text = "".join(b.get("text", "") for b in event["data"]["message"]["content"] if b.get("type") == "text")
        elif event["type"] == "turn/end":
            return {"reason": event["data"]["reason"], "text": text}
    return {"reason": None, "text": text}


def _prices_of(agent) -> dict | None:
    """The llm row's ``prices`` (None when it sets none, or the row went away with the turn)."""
    try:
        return getattr(agent.loop.llm(), "prices", None)
    except Exception:  # noqa: BLE001 - no model now: the turn's line simply has no cost
        return None
