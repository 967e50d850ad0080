"""The Team mailbox (dsh's ``TeamMailbox``): queued in the Lead's log first, then delivered.

A message is framed for its reader (``Team message <id> from <sender>:`` and the content) and carries
source ``{kind: team-message, teamId, messageId, senderId, senderName}``. ``quiet`` delivery adds it to
the target's next step without waking it (a teammate that is not live keeps it queued until it runs
again); ``wakeup`` (``followup_task``) starts a turn, resuming a settled teammate from its log.
``team/message/delivered`` is written when the target's log records the message, so queued minus
delivered is the recovery mailbox: after a restart a Lead's first Team activity retries it, and a
message the target already recorded is only acknowledged.
"""
from __future__ import annotations

import asyncio
import uuid

from dshctl.agents.loop.inbox import user_message
from dshctl.agents.subagents import descriptor as descriptors

from .board import TeamError
from .content import json_utf8_bytes, valid_blocks


def framed(message: dict) -> list[dict]:
    return [{"type": "text", "text": f"Team message {message['id']} from {message['senderName']}:"},
            *message["content"]]


def recorded(events: list[dict], message_id: str) -> bool:
    return any(e["type"] == "user/message" and (e["data"].get("source") or {}).get("messageId") == message_id
               for e in events)


class Mailbox:
    def __init__(self, service):
        self.service = service
        self.ctx = service.ctx
        self.watched: set[str] = set()
        self.sending: set[str] = set()   # queued by a send whose own dispatch has not finished

    async def send(self, found: dict, caller, request: dict) -> dict:
        service, root = self.service, found["root"]
        async with service.lock(root):
            state = service.state(root)
            target_id, target_name = service.resolve_active(root, state, request["target"])
            if target_id == caller.id:
                raise TeamError("a Team member cannot message itself", "TEAM_SELF_MESSAGE")
            waiting = sum(1 for m in state.pending_messages() if m["targetId"] == target_id)
            if waiting >= service.config["maxPendingMessagesPerMember"]:
                raise TeamError(f'teammate "{target_name}" has {waiting} pending messages', "TEAM_MAILBOX_FULL")
            if not valid_blocks(request.get("content")):   # the fold would refuse the whole Lead log
                raise TeamError("team message content must be a list of valid content blocks",
                                "TEAM_INVALID_ARGUMENT")
            message = {"id": f"team-message-{uuid.uuid4()}", "senderId": caller.id, "senderName": found["name"],
                       "targetId": target_id, "delivery": request["delivery"], "content": list(request["content"])}
            if json_utf8_bytes(framed(message)) > service.config["maxMessageBytes"]:
                raise TeamError(f'team message exceeds {service.config["maxMessageBytes"]} bytes',
                                "TEAM_MESSAGE_TOO_LARGE")
            # claimed before the lock is released, so a recovery pass never delivers it a second time
            self.sending.add(message["id"])
            try:
                service.commit(root, "team/message/queued", {"message": message})
            except BaseException:
                self.sending.discard(message["id"])
                raise
        try:
            accepted = await self.dispatch(root, message)
        finally:
            self.sending.discard(message["id"])
        return {"messageId": message["id"], "status": "accepted" if accepted else "queued"}

    async def dispatch(self, root, message: dict) -> bool:
        """Hand ``message`` to its target's inbox; False when it stays queued (a quiet message to a
        teammate that is not live, or a target that cannot be reached now)."""
        source = {"kind": "team-message", "teamId": root.id, "messageId": message["id"],
                  "senderId": message["senderId"], "senderName": message["senderName"]}
        content, target_id = framed(message), message["targetId"]
        try:
            if target_id == root.id:
                if message["delivery"] == "wakeup":
                    root.followup(user_message(content, source))
                else:
                    root.inject(content, source)
                self.watch(root, root, message)
                return True
            live = self.ctx.agents.get(target_id)
            if message["delivery"] == "quiet":
                if live is None:
                    return False
                live.inject(content, source)
                self.watch(root, live, message)
                return True
            await self.ctx.subagents.followup(root, target_id, content, {"source": source})
            self._deliver_quiet_backlog(root, target_id)
            target = self.ctx.agents.get(target_id)
            if target is not None:
                self.watch(root, target, message)
            return True
        except Exception as exc:  # noqa: BLE001 - the message stays queued; recovery retries it
            logger = self.ctx.get("logger")
            if logger is not None:
                logger.warn(f'team message "{message["id"]}" remains queued: {exc}')
            return False

    def _deliver_quiet_backlog(self, root, target_id: str) -> None:
        """Quiet messages that waited for a settled teammate reach it with the turn that revives it."""
        target = self.ctx.agents.get(target_id)
        if target is None:
            return
        for message in self.service.state(root).pending_messages():
            if (message["targetId"] == target_id and message["delivery"] == "quiet"
                    and message["id"] not in self.watched):
                source = {"kind": "team-message", "teamId": root.id, "messageId": message["id"],
                          "senderId": message["senderId"], "senderName": message["senderName"]}
                target.inject(framed(message), source)
                self.watch(root, target, message)

    def watch(self, root, target, message: dict) -> None:
        """Acknowledge ``message`` in the Lead's log once ``target``'s log records it."""
        session, message_id = target.session, message["id"]
        self.watched.add(message_id)

        def listener(event: dict) -> None:
            if event["type"] == "user/message" and (event["data"].get("source") or {}).get("messageId") == message_id:
                session.listeners.remove(listener)
                asyncio.get_running_loop().call_soon(
                    lambda: asyncio.ensure_future(self.mark_delivered(root, message_id, target.id)))
        session.listeners.append(listener)

    async def mark_delivered(self, root, message_id: str, target_id: str) -> None:
        if root.disposed or root.session.closed:
            return   # the next recovery finds it recorded and acknowledges it
        async with self.service.lock(root):
            state = self.service.state(root)
            queued = state.messages.get(message_id)
            if message_id in state.delivered or queued is None or queued["targetId"] != target_id:
                return
            self.service.commit(root, "team/message/delivered", {"messageId": message_id, "targetId": target_id})

    # ---- recovery ------------------------------------------------------------------------------
    async def recover(self, root) -> None:
        await asyncio.sleep(0)
        await self._settle_provisioning(root)
        for message in self.service.state(root).pending_messages():
            if message["id"] in self.watched or message["id"] in self.sending:
                continue
            events = self._events_of(message["targetId"], root)
            if events is not None and recorded(events, message["id"]):
                await self.mark_delivered(root, message["id"], message["targetId"])
            elif message["delivery"] == "wakeup" or self.ctx.agents.get(message["targetId"]) is not None \
                    or message["targetId"] == root.id:
                await self.dispatch(root, message)

    def _events_of(self, session_id: str, root) -> list[dict] | None:
        live = root if session_id == root.id else self.ctx.agents.get(session_id)
        if live is not None:
            return live.session.events
        try:
            return self.ctx.agents.store.read(session_id).events
        except Exception:  # noqa: BLE001 - an unreadable target: the message stays queued
            return None

    async def _settle_provisioning(self, root) -> None:
        """A member left ``provisioning`` by a crash is active when its log shows a continuable child
        of this Lead on its provider that accepted a prompt, and failed otherwise (as dsh reconciles)."""
        for member in list(self.service.state(root).members.values()):
            if member["phase"] != "provisioning" or member["id"] in self.service.creating \
                    or self.ctx.agents.get(member["id"]) is not None:
                continue
            phase, error = "failed", "provisioning did not leave a resumable child Session"
            try:
                stored = self.ctx.agents.store.read(member["id"])
                own = stored.events[int(stored.header.get("seedLength") or 0):]
                found = descriptors.fold(own) or {}
                prompted = any(e["type"] == "user/message" for e in own)
                if (stored.header.get("parentSession") == root.id and found.get("mode") == "continuable"
                        and found.get("provider") == member["provider"] and prompted):
                    phase, error = "active", None
                else:
                    error = "persisted child Session does not match the provisioned continuation"
            except Exception as exc:  # noqa: BLE001 - a missing child log is a failed member
                error = f"child Session recovery failed: {exc}"
            settled = {**member, "phase": phase, **({"error": error} if error else {})}
            await self.service.settle_member(root, settled)
