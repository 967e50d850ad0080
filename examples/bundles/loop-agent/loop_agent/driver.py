"""One session's driver: armed by /forever, it queues the continuation after every answer, retries
failures with backoff, and stops on the user's stop button or the global switch.

It acts only after ``when_idle()`` and only while no user message is pending, so user input is always
taken first. Its activation is durable (``loop-agent/activated`` and ``loop-agent/stopped``, ignorable
events in the session log), so a restarted host re-arms the sessions that were running.
"""
from __future__ import annotations

import asyncio
import time

from .backoff import COMPACTION_COOLDOWN_S, delay_ms, escalation_prompt, is_context_pressure
from .template import render

ACTIVATED, STOPPED = "loop-agent/activated", "loop-agent/stopped"


def text_of(message: dict) -> str:
    """The text blocks of a message, joined."""
    return "".join(b.get("text", "") for b in message.get("content") or [] if b.get("type") == "text")


def turn_ends(events: list[dict], after: int) -> list[dict]:
    return [e for e in events if e["type"] == "turn/end" and e["data"]["turn"] > after]


def answer_of(events: list[dict], turn: int) -> str:
    """The assistant text of ``turn`` (the newest answer before it when that turn has none)."""
    texts = [text_of(e["data"]["message"]) for e in events
             if e["type"] == "assistant/message" and e["data"]["turn"] <= turn]
    texts = [t for t in texts if t]
    return texts[-1] if texts else ""


def prompt_of(events: list[dict], turn: int) -> str:
    """The first user prompt that entered ``turn`` (what a retry sends again)."""
    current = None
    for event in events:
        if event["type"] == "turn/start":
            current = event["data"]["turn"]
        elif event["type"] == "user/message" and current == turn:
            return text_of(event["data"])
    return ""


def was_armed(events: list[dict]) -> bool:
    for event in reversed(events):
        if event["type"] in (ACTIVATED, STOPPED):
            return event["type"] == ACTIVATED
    return False


class Driver:
    def __init__(self, runner, agent):
        self.runner = runner
        self.agent = agent
        self.armed = False
        self.wait_for_user = False
        self.round = 0
        self.failures = 0
        self.last_error: dict | None = None
        self.consumed = agent.last_turn
        self.kick = False
        self.compacted_at = -COMPACTION_COOLDOWN_S
        self._saved_asker = None
        self.task = asyncio.ensure_future(self._run())

    # ---- arming ------------------------------------------------------------------------------
    def activate(self, turn: int) -> None:
        """/forever in ``turn``: continue from the answers before it."""
        if not self.armed:
            self.agent.session.append(ACTIVATED, {"turn": turn}, ignorable=True)
        self.armed, self.wait_for_user, self.kick = True, False, True
        self.consumed, self.failures = turn, 0
        self._install_answerer()
        self.runner.log(f"loop armed for session {self.agent.id}")

    def resume(self) -> None:
        """Re-arm after a restart; a session idle past idleGraceMs waits for a user message first."""
        events = self.agent.session.events
        grace = self.runner.config["idleGraceMs"]
        idle_ms = time.time() * 1000 - (events[-1]["time"] if events else 0)
        self.armed = True
        self._install_answerer()
        self.wait_for_user = grace > 0 and idle_ms > grace
        ends = turn_ends(events, 0)
        if self.wait_for_user:
            self.consumed = self.agent.last_turn      # only a turn the user starts wakes it
            return
        # Pick up where it stood: a turn that failed is retried, a finished one continued.
        self.consumed = ends[-2]["data"]["turn"] if len(ends) >= 2 else 0
        self.kick = not ends

    def disarm(self, why: str) -> None:
        if self.armed and not self.agent.disposed and not self.agent.session.closed:
            self.agent.session.append(STOPPED, {"reason": why}, ignorable=True)
            self.agent.session.commit()
        self.armed, self.kick = False, False
        self._restore_answerer()
        self.runner.log(f"loop stopped for session {self.agent.id}: {why}")

    def detach(self) -> None:
        self._restore_answerer()
        self.task.cancel()

    # ---- answering questions while driven -------------------------------------------------------
    def _install_answerer(self) -> None:
        if self._saved_asker is not None or not self.runner.config["autoAnswerQuestions"]:
            return
        self._saved_asker = (getattr(self.agent, "ask_user", None),)
        previous = self._saved_asker[0]

        async def answer(question):
            from .answers import auto_answer
            reply = auto_answer(question, free_text=self.runner.config["autoAnswerFreeText"])
            if reply is None and previous is not None:
                return await previous(question)
            return reply
        self.agent.ask_user = answer

    def _restore_answerer(self) -> None:
        if self._saved_asker is not None:
            self.agent.ask_user = self._saved_asker[0]
            self._saved_asker = None

    # ---- the loop ------------------------------------------------------------------------------
    async def _run(self) -> None:
        poll = self.runner.poll_s
        while True:
            await asyncio.sleep(0 if self.kick else poll)
            if not self.armed or self.agent.disposed:
                continue
            await self.agent.when_idle()
            if self.agent.inbox.pending:
                continue                      # user input goes first; the agent is about to run it
            if not self.runner.refresh().enabled:
                self.disarm("the loop is switched off")
                continue
            await self._phase()

    async def _phase(self) -> None:
        events = self.agent.session.events
        ends = turn_ends(events, self.consumed)
        if self.wait_for_user:
            if not ends:
                return
            self.wait_for_user = False        # the user spoke after the restart: carry on from there
        if not ends and not self.kick:
            return
        self.kick = False
        if ends:
            end = ends[-1]
            self.consumed = end["data"]["turn"]
            reason = end["data"]["reason"]
            if reason["kind"] == "aborted" and (reason.get("reason") or {}).get("kind") == "user":
                self.disarm("stopped by the user")
                return
            if reason["kind"] in ("error", "aborted"):
                await self._retry(events, end)
                return
        self.failures, self.last_error = 0, None
        self.round += 1
        text = render(self.runner.continuation(), last_answer=answer_of(events, self.consumed),
                      round=self.round)
        if not self.runner.config["quiet"]:
            self.runner.log(f"session {self.agent.id}: continuation round {self.round}")
        self.agent.followup(text)

    async def _retry(self, events: list[dict], end: dict) -> None:
        reason = end["data"]["reason"]
        self.failures += 1
        self.last_error = reason.get("error") or {"code": "ABORTED",
                                                  "message": str((reason.get("reason") or {}).get("kind"))}
        original = prompt_of(events, end["data"]["turn"])
        limit = self.runner.config["escalateAfterFailures"]
        if limit and self.failures >= limit:
            original = escalation_prompt(self._root_prompt(events), self.last_error, self.failures)
        wait = delay_ms(self.failures, initial=self.runner.config["initialBackoffMs"],
                        factor=self.runner.config["backoffFactor"], cap=self.runner.config["maxBackoffMs"])
        self.runner.log(f"session {self.agent.id}: turn {end['data']['turn']} failed "
                        f"({self.last_error.get('code')}); retry {self.failures} in {wait:.0f} ms", "warn")
        await asyncio.sleep(wait / 1000)
        if is_context_pressure(self.last_error):
            await self._compact()
        if not self.armed or self.agent.inbox.pending or self.agent.status == "running":
            return                             # a newer user message supersedes the stale retry
        self.agent.followup(original or self.runner.continuation())

    def _root_prompt(self, events: list[dict]) -> str:
        """The prompt the chain of failures started from (escalations are not stacked)."""
        for end in reversed(turn_ends(events, 0)):
            if end["data"]["reason"]["kind"] not in ("error", "aborted"):
                break
            text = prompt_of(events, end["data"]["turn"])
            if not text.startswith("The previous attempt failed"):
                return text
        return self.runner.continuation()

    async def _compact(self) -> None:
        compaction = self.agent.ctx.get("compaction")
        now = time.monotonic()
        if compaction is None or now - self.compacted_at < COMPACTION_COOLDOWN_S:
            return
        self.compacted_at = now
        try:
            await compaction.compact_now(self.agent, reason="loop-agent: context pressure")
        except Exception as exc:  # noqa: BLE001 - a failed compaction is logged; the retry goes on
            self.runner.log(f"session {self.agent.id}: compaction failed: {exc}", "warn")
