"""``ctx.subagents`` (dsh's ``SubagentRuntime``): named providers, one-shot runs, continuable children.

``start(name, request)`` validates capabilities and ``maxDepth``, snapshots the one-shot descriptor and
returns the provider's published run; ``subagent/start`` is emitted then, ``subagent/end`` when its
result settles (``{runId, provider, id, local, stopReason, lastAssistantMessage?}``).
``start_continuable`` makes a durable child and accepts its prompt; each activation (the child running
until it is quiet) emits the same pair, then the parent gets dsh's settlement notice (a user message
with source ``subagent-settled``: it wakes an idle parent, steers a busy one) and the child leaves the
registry. ``followup`` delivers a later turn, cold-resuming the child from its log when it is not live;
``interrupt`` stops a live child's turn (its direct parent or any ancestor may); ``report_from`` lets a
live child hand content to its parent. Child runs are bounded by ``maxConcurrent`` (dsh: five).
"""
from __future__ import annotations

import asyncio
import uuid

from dshctl.agents.loop.inbox import user_message

from . import descriptor as descriptors
from . import outcome
from .child import check_max_depth, child_options, create_child
from .providers import gate_for


class SubagentError(RuntimeError):
    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def _call_of(request: dict) -> dict:
    """The delegating tool call's id, when a model tool started the child: front ends (the browser
    app) show the child at that call."""
    return {"toolCallId": request["toolCallId"]} if request.get("toolCallId") else {}


def _blocks(content) -> list[dict]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


class SubagentRuntime:
    def __init__(self, ctx, max_concurrent: int = 5):
        self.ctx = ctx
        self.providers: dict[str, object] = {}
        self.gate = asyncio.Semaphore(max_concurrent)
        self.activations: dict[str, asyncio.Task] = {}   # continuable child id -> its watcher
        self.parent_of: dict[str, str] = {}                # continuable child id -> its parent's id
        self.closing: set[str] = set()                     # settled, leaving the registry

    # ---- registry ------------------------------------------------------------------------------
    def register_provider(self, provider) -> None:
        if provider.name in self.providers:
            raise SubagentError(f'subagent provider "{provider.name}" is already registered', "DUPLICATE_PROVIDER")
        self.providers[provider.name] = provider
        self.ctx.emit("subagent/provider-added", provider)

    def remove_provider(self, name: str) -> None:
        if self.providers.pop(name, None) is not None:
            self.ctx.emit("subagent/provider-removed", name)

    def get_provider(self, name: str):
        return self.providers.get(name)

    def _expect(self, name: str):
        provider = self.providers.get(name)
        if provider is None:
            raise SubagentError(f'no subagent provider registered for "{name}"', "NO_PROVIDER")
        return provider

    def _check_capabilities(self, provider, request: dict) -> None:
        for key, cap in (("outputSchema", "outputSchema"), ("maxDepth", "depthLimit"),
                         ("toolFilter", "toolFilter"), ("persona", "persona")):
            if request.get(key) is not None and not provider.capabilities.get(cap):
                raise SubagentError(f'subagent provider "{provider.name}" does not support the "{cap}" capability',
                                    "UNSUPPORTED_CAPABILITY")

    # ---- one-shot ------------------------------------------------------------------------------
    async def start(self, name: str, request: dict):
        provider = self._expect(name)
        self._check_capabilities(provider, request)
        check_max_depth(request.get("maxDepth"))
        descriptor = descriptors.snapshot("one-shot", name, request.get("label"))
        run = await provider.start({**request, "descriptor": descriptor})
        identity = {"runId": str(uuid.uuid4()), "provider": name, "id": run.id, "local": run.local_agent is not None,
                    **_call_of(request)}
        run.result.add_done_callback(lambda done: self._end(identity, done, request["parent"]))
        self.ctx.emit("subagent/start", {**identity, "parent": request["parent"].id})
        return run

    def _end(self, identity: dict, done: asyncio.Future, parent) -> None:
        if done.cancelled() or done.exception() is not None:
            self.ctx.emit("subagent/end", {**identity, "stopReason": "error", "parent": parent.id})
            return
        result = done.result()
        extra = {"lastAssistantMessage": result["output"]} if result["output"] else {}
        self.ctx.emit("subagent/end", {**identity, "stopReason": result["stopReason"], **extra, "parent": parent.id})

    # ---- continuable ---------------------------------------------------------------------------
    async def start_continuable(self, spec: dict) -> dict:
        """``spec``: ``provider``, ``label``, ``childId?`` (a caller-chosen session id, as Agent Teams
        records the member first), ``request`` (parent, prompt, agentOptions?, persona?, toolFilter?, maxDepth?). Returns ``{childId, messageId}`` once the child's inbox accepted it."""
        name, request = spec["provider"], spec["request"]
        provider = self._expect(name)
        if getattr(provider, "prepare_continuable", None) is None:
            raise SubagentError(f'subagent provider "{name}" does not support continuable children '
                                "(no prepareContinuable capability)", "UNSUPPORTED_CAPABILITY")
        self._check_capabilities(provider, request)
        check_max_depth(request.get("maxDepth"))
        options = request.get("agentOptions") or {}
        descriptor = descriptors.snapshot("continuable", name, spec["label"], agentProvider=options.get("provider"),
                                          agentModel=options.get("model"), persona=request.get("persona"),
                                          toolFilter=request.get("toolFilter"))
        created = await provider.prepare_continuable({"parent": request["parent"]})
        child = await create_child(request["parent"], request, descriptor, seed=created.get("seed"),
                                   max_depth=request.get("maxDepth"), child_id=spec.get("childId"))
        message = user_message(_blocks(request["prompt"]))
        self._activate(child, request["parent"].id, name, message, _call_of(request))
        return {"childId": child.id, "messageId": message["id"]}

    def _activate(self, child, parent_id: str, provider: str, message: dict, call: dict | None = None) -> None:
        task = asyncio.ensure_future(self._activation(child, parent_id, provider, message, call or {}))
        self.activations[child.id] = task
        self.parent_of[child.id] = parent_id
        task.add_done_callback(lambda _t: self.activations.get(child.id) is task and self.activations.pop(child.id))

    async def _activation(self, child, parent_id: str, provider: str, first: dict, call: dict) -> None:
        identity = {"runId": str(uuid.uuid4()), "provider": provider, "id": child.id, "local": True, **call}
        async with gate_for(child, self.gate):
            boundary = len(child.session.events)
            self.ctx.emit("subagent/start", {**identity, "parent": parent_id})
            child.followup(first)
            while True:     # quiet: idle with nothing queued (a send_message may land meanwhile)
                await child.when_idle()
                await asyncio.sleep(0)
                if child.status == "idle" and not child.inbox.pending:
                    break
            self.closing.add(child.id)     # from here a send_message waits, then resumes from the log
            own = child.session.events[boundary:]
            stop_reason, output = outcome.epoch_stop_reason(own), outcome.final_output(own)
            try:
                self._notify(parent_id, child.id, stop_reason, output)
            finally:
                await self.ctx.agents.close(child.id)
                self.closing.discard(child.id)
        extra = {"lastAssistantMessage": output} if output else {}
        self.ctx.emit("subagent/end", {**identity, "stopReason": stop_reason, **extra, "parent": parent_id})

    def _notify(self, parent_id: str, child_id: str, stop_reason: str, output: list[dict]) -> None:
        """Never blocks the child's release: a notice that cannot be delivered is logged and dropped
        (as dsh does), since the child's own log is the durable record."""
        try:
            self._deliver_notice(parent_id, child_id, stop_reason, output)
        except Exception as exc:  # noqa: BLE001 - a parent going away mid-delivery
            logger = self.ctx.get("logger")
            if logger is not None:
                logger.warn(f'subagent "{child_id}" settlement notice was not delivered to its parent: {exc}')

    def _deliver_notice(self, parent_id: str, child_id: str, stop_reason: str, output: list[dict]) -> None:
        parent = self.ctx.agents.get(parent_id)
        if parent is None or parent.disposed:
            return   # the child's own log stays the record
        content, source = outcome.settlement_notice(child_id, stop_reason, output)
        message = user_message(content, source)
        if parent.status == "idle":
            parent.followup(message)
        else:
            parent.steer(message)

    def _lineage(self, child_id: str) -> dict:
        from dshctl.agents.session.store import SessionNotFound
        live = self.ctx.agents.get(child_id)
        if live is not None:
            return live.session.header
        try:
            return self.ctx.agents.store.read(child_id).header
        except SessionNotFound:
            raise SubagentError(f'subagent "{child_id}" is unavailable', "UNAVAILABLE") from None

    async def followup(self, parent, child_id: str, content, options: dict | None = None) -> str:
        header = self._lineage(child_id)
        if header.get("parentSession") != parent.id:
            raise SubagentError(f'agent "{parent.id}" is not the parent of subagent "{child_id}"', "UNAUTHORIZED")
        message = user_message(_blocks(content), (options or {}).get("source"))
        activation = self.activations.get(child_id)
        if activation is not None and child_id not in self.closing and self.ctx.agents.get(child_id) is not None:
            self.ctx.agents.get(child_id).followup(message)
            return message["id"]
        if activation is not None:
            await asyncio.gather(activation, return_exceptions=True)   # let it leave, then resume it
        stored = self.ctx.agents.store.read(child_id)
        found = descriptors.fold(stored.events)
        if found is None or found.get("mode") != "continuable":
            raise SubagentError(f'subagent "{child_id}" is not continuable', "NOT_CONTINUABLE")
        request = {"persona": found.get("persona"), "toolFilter": found.get("toolFilter"),
                   "agentOptions": {"provider": found.get("agentProvider"), "model": found.get("agentModel")}}
        depth = int(stored.header.get("delegationDepth") or 1)
        child = await self.ctx.agents.open(child_id, options=child_options(parent, request, depth))
        self._activate(child, parent.id, found["provider"], message)
        return message["id"]

    def interrupt(self, target_id: str, authority: dict) -> None:
        """``authority``: ``{"kind": "user", "parentSessionId"}`` or ``{"kind": "ancestor", "agent"}``."""
        child = self.ctx.agents.get(target_id)
        if child is None or target_id not in self.activations:
            return   # an absent, finished or one-shot target: an accepted no-op
        if not self._owns(authority, child):
            raise SubagentError(f'not authorized to interrupt agent "{target_id}"', "UNAUTHORIZED")
        child.abort({"kind": "parent"}, keep_inbox=True)

    async def drain_continuable_children(self, parent, child_ids) -> None:
        """Stop the selected live continuable children of ``parent`` and wait until each has settled and
        left (dsh's ``drainContinuableChildren``): a running turn ends aborted (cause ``parent``), queued
        input is dropped so no further turn starts, and the parent gets the usual settlement notice.
        The parent's other children keep running; an id with no live activation is a no-op."""
        if self.ctx.agents.get(parent.id) is not parent:
            raise SubagentError("selected child teardown requires the exact live parent agent", "UNAUTHORIZED")
        targets = []
        for child_id in dict.fromkeys(child_ids):
            task = self.activations.get(child_id)
            if task is None:
                continue
            if self.parent_of.get(child_id) != parent.id:
                raise SubagentError(f'subagent "{child_id}" is not a direct child of agent "{parent.id}"',
                                    "UNAUTHORIZED")
            targets.append(task)
            child = self.ctx.agents.get(child_id)
            if child is not None:
                child.abort({"kind": "parent"})
        await asyncio.gather(*targets, return_exceptions=True)

    def _owns(self, authority: dict, child) -> bool:
        wanted = authority.get("parentSessionId") if authority.get("kind") == "user" else authority["agent"].id
        if authority.get("kind") == "user":
            return child.session.header.get("parentSession") == wanted
        header = child.session.header
        for _ in range(64):   # walk up the recorded lineage
            parent_id = header.get("parentSession")
            if parent_id is None:
                return False
            if parent_id == wanted:
                return True
            header = self._lineage(parent_id)
        return False

    async def report_from(self, child, content, options: dict | None = None) -> str:
        parent_id = child.session.header.get("parentSession")
        parent = self.ctx.agents.get(parent_id) if parent_id else None
        if parent is None:
            raise SubagentError(f'the parent of "{child.id}" is not live', "PARENT_UNAVAILABLE")
        message = user_message(_blocks(content), {"kind": "subagent-report", "form": "relay",
                                                  "senderSessionId": child.id})
        if (options or {}).get("delivery") == "quiet":
            parent.inject(message["content"], message["source"])
        elif parent.status == "idle":
            parent.followup(message)
        else:
            parent.steer(message)
        return message["id"]

    async def until_quiet(self, agent) -> None:
        """Until ``agent`` is idle with no activation of its children left (their notices taken)."""
        while True:
            await agent.when_idle()
            pending = [t for cid, t in list(self.activations.items()) if self.parent_of.get(cid) == agent.id]
            if not pending:
                await asyncio.sleep(0)
                if agent.status == "idle" and not agent.inbox.pending:
                    return
                continue
            await asyncio.gather(*pending, return_exceptions=True)

    # ---- discovery -----------------------------------------------------------------------------
    def list_children(self, parent_id: str) -> list[dict]:
        """Direct session-backed children, live first then stored: ``{kind, id, mode?, label?, reason?}``."""
        seen, out = set(), []
        for info in self.ctx.agents.store.list():
            if info.error is None and info.header.get("parentSession") == parent_id:
                seen.add(info.id)
                out.append(self._entry(info.id))
        for agent in list(self.ctx.agents.live.values()):
            if agent.id not in seen and agent.session.header.get("parentSession") == parent_id:
                out.append(self._entry(agent.id))
        return out

    def _entry(self, child_id: str) -> dict:
        live = self.ctx.agents.get(child_id)
        try:
            events = live.session.events if live is not None else self.ctx.agents.store.read(child_id).events
            found = descriptors.fold(events)
        except Exception:  # noqa: BLE001 - an unreadable child is reported, not dropped
            return {"kind": "diagnostic", "id": child_id, "reason": "corrupt"}
        if found is None:
            return {"kind": "diagnostic", "id": child_id, "reason": "unsupported"}
        return {"kind": "child", "id": child_id, "mode": found["mode"], "label": found.get("label", ""),
                "provider": found["provider"]}

    def live_children(self) -> list[dict]:
        """Every sub-agent live in this host now: ``{id, parent, label, provider, mode, model, state}``
        (``state``: running, or idle while it waits for its next turn or for release)."""
        llm = self.ctx.get("llm")
        out = []
        for agent in list(self.ctx.agents.live.values()):
            header = agent.session.header or {}
            if header.get("origin") != "subagent":
                continue
            found = descriptors.fold(agent.session.events[int(header.get("seedLength") or 0):]) or {}
            out.append({"id": agent.id, "parent": header.get("parentSession"), "label": found.get("label", ""),
                        "provider": found.get("provider"), "mode": found.get("mode"),
                        "model": (agent.options or {}).get("model") or getattr(llm, "model", None),
                        "state": agent.status})
        return out

    # dsh's spellings, for plugins ported from TypeScript
    registerProvider, getProvider, startContinuable = register_provider, get_provider, start_continuable
    reportFrom, listChildren = report_from, list_children
    drainContinuableChildren = drain_continuable_children

    async def drain(self) -> None:
        tasks = list(self.activations.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
