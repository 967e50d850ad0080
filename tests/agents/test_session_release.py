"""Per-session resources released when a session goes idle (issue 28, finding 2): the host kept
every session's ``.lock`` fd open for its lifetime (50 runs: 14 -> 64 fds)."""
import asyncio
import os

from dshctl.host.agent_ops import TurnStream
from tests.agents.loop_rows import agent_home
from tests.host.helpers import InProcess, run_async


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def run(host, prompt, session=None):
    request = {"prompt": prompt, **({"session": session} if session else {})}
    lines = [line async for line in TurnStream(host, request)]
    assert lines[-1].get("done"), lines[-1]
    return lines[-1]


@run_async(timeout=120)
async def test_fd_count_is_flat_over_1000_sessions(tmp_path):
    home = agent_home(tmp_path, [{"text": "hi"}] * 1100)
    async with InProcess(home) as host:
        for i in range(30):  # warm up: imports, caches, the first files
            await run(host, f"warm {i}")
        before, tasks_before = fds(), len(asyncio.all_tasks())
        for i in range(1000):
            await run(host, f"n {i}")
        await asyncio.sleep(0.05)                 # the last retirements finish
        after, tasks_after = fds(), len(asyncio.all_tasks())
        agents = host.root.get("agents")
        assert after - before <= 2, (before, after)
        assert tasks_after - tasks_before <= 2, (tasks_before, tasks_after)  # no pending get per turn
        assert len(agents.live) <= agents.keep_idle


@run_async()
async def test_a_released_session_goes_on_where_it_stopped(tmp_path):
    home = agent_home(tmp_path, [{"text": "one"}, {"text": "two"}])
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agents.keep_idle = 0                      # release at once when the turn ends
        first = await run(host, "first")
        assert first["session"] not in agents.live
        second = await run(host, "second", first["session"])
        assert second["session"] == first["session"] and second["text"] == "two"
        stored = agents.store.read(first["session"])
        users = [e["data"]["content"][0]["text"] for e in stored.events if e["type"] == "user/message"]
        assert users == ["first", "second"]


@run_async()
async def test_an_idle_session_is_released_after_the_idle_time(tmp_path):
    home = agent_home(tmp_path, [{"text": "one"}])
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        agents.idle_release_s = 0.2
        done = await run(host, "first")
        assert done["session"] in agents.live
        await asyncio.sleep(0.6)
        assert done["session"] not in agents.live
