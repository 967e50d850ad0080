"""One step's tool calls: parallel groups cut at exclusive calls, results committed in the model's order.

Before each start the scheduler asks the tool ``isConcurrencySafe(args)`` (re-asked at the moment of
starting, so a later call of a group can still turn the group into a barrier). A parallel group runs as a
rolling pool of at most ``max_parallel`` calls; an exclusive call runs alone. ``tool/call`` is logged
when a call starts, ``tool/result`` when every earlier call's result is committed. On abort, started
calls drain (their bodies see the abort) and unstarted ones get a synthetic result, so the log always
pairs every call with a result.
"""
from __future__ import annotations

import asyncio

from .definition import conflict
from .pipeline import plan, run_planned
from .results import SKIPPED, tool_call_data, tool_result_data

DEFAULT_MAX_PARALLEL = 8


class _Step:
    def __init__(self, agent, turn: int, step: int, calls: list[dict]):
        self.agent, self.turn, self.step = agent, turn, step
        self.calls = calls
        self.plans = [plan(agent, call) for call in calls]
        self.results: list[dict | None] = [None] * len(calls)
        self.call_seqs: list[int] = [-1] * len(calls)
        self.committed = 0
        self.concluded = False
        self.footprints: dict[int, list] = {}    # running call -> what it touches

    def parallel(self, index: int) -> bool:
        tool, args, early = self.plans[index]
        return early is None and tool is not None and tool.parallel_safe(args)

    def may_join(self, index: int) -> bool:
        """Parallel-safe now, and touching nothing a running call of the group writes (or vice versa)."""
        if not self.parallel(index):
            return False
        tool, args, _ = self.plans[index]
        footprint = tool.touches(args)
        return not any(conflict(footprint, other) for other in self.footprints.values())

    def log_call(self, index: int) -> None:
        event = self.agent.session.append("tool/call", tool_call_data(self.turn, self.step, self.calls[index]))
        self.call_seqs[index] = event["seq"]

    async def run(self, index: int) -> None:
        tool, args, early = self.plans[index]
        if early is not None:
            self.results[index] = early
            return
        self.results[index] = await run_planned(self.agent, self.calls[index], tool, args, turn=self.turn,
                                                step=self.step, origin="model")

    def commit_ready(self) -> None:
        while self.committed < len(self.calls) and self.results[self.committed] is not None:
            index = self.committed
            result = self.results[index]
            self.agent.session.append("tool/result", tool_result_data(self.turn, self.step,
                                                                      self.calls[index]["id"], result),
                                      surfaceOp="append", sourceEventSeqs=[self.call_seqs[index]])
            self.concluded |= result.get("concludesTurn") is True and not result.get("isError")
            self.committed += 1

    def skip_rest(self, start: int) -> None:
        for index in range(start, len(self.calls)):
            self.log_call(index)
            self.results[index] = SKIPPED
        self.commit_ready()


async def run_tool_calls(agent, turn: int, step: int, calls: list[dict],
                         max_parallel: int = DEFAULT_MAX_PARALLEL) -> bool:
    """Run ``calls`` (tool-call blocks in model order); True when a result concluded the turn."""
    state = _Step(agent, turn, step, calls)
    abort = agent.abort_event
    index = 0
    while index < len(calls):
        if abort.is_set():
            state.skip_rest(index)
            break
        if not state.parallel(index):
            state.log_call(index)
            await state.run(index)
            state.commit_ready()
            index += 1
            continue
        index = await _run_group(state, index, max_parallel, abort)
    return state.concluded


async def _run_group(state: _Step, first: int, max_parallel: int, abort: asyncio.Event) -> int:
    """Run the parallel group starting at ``first``; returns the index of the first call not started."""
    running: dict[asyncio.Task, int] = {}
    next_start = first
    while True:
        while (not abort.is_set() and next_start < len(state.calls) and len(running) < max_parallel
               and (next_start == first or state.may_join(next_start))):
            tool, args, _ = state.plans[next_start]
            state.footprints[next_start] = tool.touches(args)
            state.log_call(next_start)
            running[asyncio.ensure_future(state.run(next_start))] = next_start
            next_start += 1
        if not running:
            return next_start
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            state.footprints.pop(running.pop(task), None)
            task.result()   # run() never raises for model input; a bug here should surface
        state.commit_ready()
