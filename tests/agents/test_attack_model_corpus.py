"""The hostile-model corpus (issue 28): what a model can send — garbage chunks, huge and deep
arguments, unknown tools, thousands of calls, an endless stream, path tricks through every file
tool, a symlink swapped while calls run. Each turn ends with results or a clear error; the host
never raises, nothing is written outside the workspace, and the leak counts stay flat."""
from __future__ import annotations

import asyncio
import json
import os
import threading
import time

import pytest

from tests.agents.loop_rows import PROBE, agent_home, agent_rows
from tests.agents.test_loop_turns import one_turn, turn_end
from tests.host.helpers import InProcess, bundle_dir, make_home, run_async, write
from tests.leaks import Counts

DEEP = "[" * 100_000 + "]" * 100_000
TRICKS = ["../outside.txt", "/etc/passwd", "a/../../outside.txt", "link-out/x.txt", "link-out",
          "\x00", "a" * 5000, "", ".", "sub/../../outside.txt", "~/x"]


def _calls(name, args_list):
    return [{"name": name, "arguments": a} for a in args_list]


def _replies(work):
    fs_calls = []
    for path in TRICKS:
        fs_calls += _calls("read_file", [{"path": path}])
        fs_calls += _calls("list_dir", [{"path": path}])
        fs_calls += _calls("search", [{"pattern": "secret", "path": path}])
        fs_calls += _calls("write_file", [{"path": path, "content": "pwned"}])
    return [
        {"text": "warm"},
        {"toolCalls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": "b" * 2_000_000}},
                       {"name": "echo", "arguments": DEEP},
                       {"name": "no_such_tool", "arguments": {}},
                       {"name": "echo", "arguments": "{" * 10 + "not json"}]},
        {"text": "step two"},
        {"toolCalls": fs_calls},
        {"text": "paths done"},
        {"toolCalls": [{"name": "echo", "arguments": {"text": f"n{i}"}} for i in range(2000)]},
        {"text": "many done"},
        {"text": "after garbage"},
        {"text": "after the endless stream"},
    ] + [{"text": "spare"}] * 4


async def _garbage(options, next_):
    async def gen():
        for chunk in (1, None, "text", {"type": 5}, {"type": "text-delta"},
                      {"type": "tool-call-delta", "index": "x"}, {"type": "finish"}):
            yield chunk
    return gen()


async def _endless(options, next_):
    async def gen():
        while True:
            yield {"type": "text-delta", "index": 0, "text": "more "}
            await asyncio.sleep(0)
    return gen()


@run_async(timeout=180)
async def test_the_hostile_model_corpus(tmp_path):
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    write(work / "a" / "keep.txt", "inside\n")
    write(work / "sub" / "keep.txt", "inside\n")
    write(outside / "secret.txt", "secret\n")
    os.symlink(outside, work / "link-out")
    home = agent_home(tmp_path, _replies(work), fs_root=str(work), probe={},
                      loop={"maxReplyChunks": 20_000})
    async with InProcess(home) as host:
        agents = host.root.get("agents")
        warm = await one_turn(host, "warm up")  # imports, first files
        await agents.close(warm.id)
        before = Counts.now(tmp_path / "tmp-none")
        agent = await one_turn(host, "big, deep, unknown, bad json")
        results = [e["data"] for e in agent.session.events if e["type"] == "tool/result"]
        codes = [(r.get("error") or {}).get("code") for r in results]
        assert codes == [None, "TOOL_ARGUMENTS_JSON", "TOOL_UNKNOWN", "TOOL_ARGUMENTS_JSON"], codes
        assert (work / "big.txt").stat().st_size == 2_000_000
        assert turn_end(agent)["kind"] == "completed"

        agent.followup("path tricks")
        await agent.when_idle()
        n = len(results)
        results = [e["data"] for e in agent.session.events if e["type"] == "tool/result"][n:]
        assert len(results) == 4 * len(TRICKS)
        for r in results:
            text = str(r)
            assert "secret\\n" not in text and "secret.txt" not in text, text[:300]
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
        assert (outside / "secret.txt").read_text() == "secret\n"

        agent.followup("thousands of calls")
        await agent.when_idle()
        many = [e for e in agent.session.events if e["type"] == "tool/result"][n + 4 * len(TRICKS):]
        assert len(many) == 2000 and turn_end(agent)["kind"] == "completed", (len(many), turn_end(agent))

        host.root.on("llm/stream", _garbage)
        agent.followup("garbage")
        await agent.when_idle()
        assert turn_end(agent)["kind"] == "error"
        await agents.close(agent.id)
        after = Counts.now(tmp_path / "tmp-none")
    before.assert_flat(after, rss_slack_mb=200, thread_slack=os.cpu_count() + 4)


@run_async(timeout=120)
async def test_an_endless_stream_ends_the_turn_at_max_reply_chunks(tmp_path):
    home = agent_home(tmp_path, [{"text": "after"}], loop={"maxReplyChunks": 500})
    async with InProcess(home) as host:
        host.root.on("llm/stream", _endless)
        agent = await one_turn(host, "talk forever")
        reason = turn_end(agent)
        assert reason["kind"] == "error" and reason["error"]["code"] == "STREAM_TOO_LONG", reason
        chunks = [e for e in agent.session.events if e["type"] == "assistant/chunk"]
        assert len(chunks) == 500


@pytest.mark.parametrize("tools", ["fs-tools", "tool-fs"])
@run_async(timeout=120)
async def test_a_symlink_swapped_while_writes_run_never_lets_one_out(tmp_path, tools):
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "d").mkdir(parents=True)
    if tools == "fs-tools":                      # dshctl's first file tools
        calls = [{"name": "write_file", "arguments": {"path": f"d/f{i}.txt", "content": "x"}}
                 for i in range(1000)]
        calls += [{"name": "read_file", "arguments": {"path": f"d/f{i}.txt"}} for i in range(100)]
        home = agent_home(tmp_path, [{"toolCalls": calls}, {"text": "done"}], fs_root=str(work))
    else:                                        # dsh's read / write by dsh's names
        calls = [{"name": "write", "arguments": {"file_path": f"d/f{i}.txt", "content": "x"}}
                 for i in range(1000)]
        calls += [{"name": "read", "arguments": {"file_path": f"d/f{i}.txt"}} for i in range(100)]
        rows = agent_rows([{"toolCalls": calls}, {"text": "done"}], probe={})
        rows += f'    - {json.dumps({"id": "fs", "name": "@dshctl/tool-fs", "config": {"root": str(work)}})}\n'
        home = make_home(tmp_path, rows)
        write(bundle_dir(home) / "plugins" / "probe.py", PROBE.lstrip())
    stop = threading.Event()

    def swapper():
        real, link = work / "d", work / "d-link"
        parked = work / "d-real"
        while not stop.is_set():
            try:
                os.rename(real, parked)          # the directory goes away…
                os.symlink(outside, real)        # …a link to the outside takes its place…
                time.sleep(0.0005)
                os.unlink(real)
                os.rename(parked, real)          # …and the directory comes back
                time.sleep(0.0005)
            except OSError:
                pass
        del link
    async with InProcess(home) as host:
        thread = threading.Thread(target=swapper, daemon=True)
        thread.start()
        try:
            agent = await one_turn(host, "write under a moving directory")
        finally:
            stop.set()
            thread.join(5)
        assert turn_end(agent)["kind"] == "completed"
    assert list(outside.iterdir()) == [], sorted(p.name for p in outside.iterdir())[:5]
