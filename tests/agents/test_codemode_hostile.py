"""The worker is a hostile party: whatever the program does to the channel or the machine, the host
survives, the run ends with a clean error, and no process, descriptor, task or scratch directory leaks."""
import asyncio
import os
import time

import pytest

from dshctl.agents.codemode.runtime import Limits, Namespace, run_program
from tests.agents.codemode_helpers import alive, fd_links, live_descendants, scratch_dirs

LIMITS = Limits(cpu_seconds=5, wall_seconds=10, max_frame_bytes=1 << 20, max_calls_in_flight=8)
# The program writing straight to the channel, whole frames at a time (blocking, like a patient forger).
RAW = ("import os, socket\ndef raw(b):\n    s = socket.socket(fileno=os.dup(3))\n    s.setblocking(True)\n"
       "    s.sendall(b)\n    s.close()\n")


async def _run(program, functions=None, limits=LIMITS):
    before_tasks = len(asyncio.all_tasks())
    result = await run_program(program, [Namespace("tools", functions or {})], limits)
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before_tasks, "a task outlived the run"
    return result


@pytest.fixture
def no_leaks():
    fds, dirs = set(fd_links()), scratch_dirs()
    yield
    assert set(fd_links()) <= fds, "a descriptor outlived the run"
    assert live_descendants() == [], "a process outlived the run"
    assert scratch_dirs() == dirs, "a scratch directory outlived the run"


def hostile(program, functions=None, limits=LIMITS):
    return asyncio.run(_run(program, functions, limits))


async def slow(args):
    await asyncio.sleep(30)


async def echo(args):
    return args


def test_garbage_on_the_channel_is_dropped(no_leaks):
    result = hostile(RAW + "raw(b'garbage\\n\\xff\\xfe\\n[1,2]\\nnull\\n{\"type\":\"done\",\"value\":NaN}\\n'"
                     " b'{\"type\":\"call\",\"id\":\"x\",\"global\":\"tools\",\"name\":\"echo\",\"args\":1}\\n')\n"
                     "return await tools.echo({'still': 'works'})", {"echo": echo})
    assert result.error is None and result.value == {"still": "works"}


def test_a_forged_done_is_still_checked(no_leaks):
    result = hostile(RAW + "raw(b'{\"type\":\"done\",\"value\":1e400}\\n')\nimport time\ntime.sleep(5)")
    assert result.error == {"kind": "invalid-output", "message": "program completion must be lossless JSON"}
    big = hostile(RAW + "raw(b'{\"type\":\"done\",\"value\":\"' + b'x' * 2_000_000 + b'\"}\\n')")
    assert big.error["kind"] == "output-limit"


def test_a_100_mb_line_is_refused_without_buffering_it(no_leaks):
    started = time.monotonic()
    result = hostile(RAW + "chunk = b'x' * (1 << 20)\nfor _ in range(100):\n    raw(chunk)\nraw(b'\\n')")
    assert result.error == {"kind": "output-limit", "message": "the worker sent a frame larger than 1048576 bytes"}
    assert time.monotonic() - started < 10


def test_replies_for_ids_it_never_got_and_duplicate_ids(no_leaks):
    calls = []

    async def count(args):
        calls.append(args)
        return len(calls)
    result = hostile(RAW + "raw(b'{\"type\":\"reply\",\"id\":99,\"ok\":true,\"value\":1}\\n')\n"
                     "raw(b'{\"type\":\"call\",\"id\":1000,\"global\":\"tools\",\"name\":\"count\",\"args\":\"a\"}\\n' * 3)\n"
                     "return await tools.count('b')", {"count": count})
    assert result.error is None
    assert calls.count("a") == 1                 # a repeated id is answered at most once


def test_a_call_flood_is_bounded(no_leaks):
    result = hostile("import asyncio\nrefused = []\nasync def one():\n    try:\n        await tools.slow({})\n"
                     "    except ToolCallError as e:\n        refused.append(str(e))\n"
                     "tasks = [asyncio.ensure_future(one()) for _ in range(12)]\nawait asyncio.sleep(0.5)\nreturn refused",
                     {"slow": slow})
    # 8 calls run (and are cancelled when the run ends with them in flight); the rest are refused at once.
    assert result.value == ["too many tool calls in flight (limit 8)"] * 4
    flood = hostile(RAW + "for i in range(20000):\n    raw(b'{\"type\":\"call\",\"id\":%d,\"global\":\"tools\","
                    "\"name\":\"slow\",\"args\":{}}\\n' % i)\nreturn 'flooded'", {"slow": slow})
    # The worker never reads the refusals: they pile up in the host's outbox until its bound ends the run,
    # or the worker finishes first.
    assert flood.value == "flooded" or flood.error == {"kind": "exception", "message": "the worker stopped reading its channel"}


def test_a_program_that_never_answers_meets_the_wall_clock(no_leaks):
    result = hostile("import time\nwhile True:\n    time.sleep(1)", limits=Limits(wall_seconds=1))
    assert result.error == {"kind": "timeout", "message": "wall-clock ceiling reached (1s)"}


def test_forks_die_with_the_run_even_when_they_leave_the_group(no_leaks):
    # The pids a confined program sees are its PID namespace's, not ours: the forks mark their command
    # line instead, and the host looks for the mark. One stays in the group, one calls setsid and
    # closes every descriptor (the escape that outlived a run before the sandbox).
    mark = f"dshctl-escapee-{os.getpid()}-{time.monotonic_ns()}"
    result = hostile("import os, time\nfor escape in (False, True):\n    if os.fork() == 0:\n"
                     "        if escape:\n            os.setsid()\n            os.closerange(0, 1024)\n"
                     f"        os.execv('/bin/sh', ['sh', '-c', 'sleep 60; : {mark}'])\n"
                     "time.sleep(0.3)\nreturn 'forked'")
    assert result.error is None and result.value == "forked"
    deadline = time.monotonic() + 3
    while processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_marked(mark) == []


def processes_marked(mark: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if mark.encode() in handle.read():
                    found.append(entry)
        except OSError:
            pass
    return found


def test_unbounded_allocation_and_an_infinite_loop(no_leaks):
    memory = hostile("chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))",
                     limits=Limits(address_space_bytes=256 << 20, wall_seconds=10))
    assert memory.error["kind"] in ("exception", "worker-exit")
    assert "MemoryError" in memory.error["message"] or "worker" in memory.error["message"]
    # Generous wall clocks: on a loaded machine one CPU second can take many seconds of wall time.
    spin = hostile("while True:\n    pass", limits=Limits(cpu_seconds=1, wall_seconds=60))
    assert spin.error["kind"] == "timeout"
    ignored = hostile("import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
                      limits=Limits(cpu_seconds=1, wall_seconds=60))
    assert ignored.error == {"kind": "timeout", "message": "CPU budget exhausted (1s of CPU time)"}


def test_channel_closed_mid_call(no_leaks):
    result = hostile("import os, asyncio\ntask = asyncio.ensure_future(tools.slow({}))\nawait asyncio.sleep(0.2)\n"
                     "os.close(3)\nawait task", {"slow": slow})
    assert result.error["kind"] == "worker-exit"
    died = hostile("import os, asyncio\ntask = asyncio.ensure_future(tools.slow({}))\nawait asyncio.sleep(0.2)\n"
                   "os._exit(9)", {"slow": slow})
    assert died.error == {"kind": "worker-exit", "message": "worker exited with code 9 before completing"}


def test_reaching_for_host_objects_finds_only_data(no_leaks):
    secret = {"reached": False}

    async def guarded(args):
        secret["reached"] = True
        return "no"
    result = hostile(RAW + "out = []\nfor name in ('__class__', '__dict__', '__init__', 'constructor', '__proto__', 'guarded.__globals__'):\n"
                     "    try:\n        tools[name]\n        out.append(name)\n    except KeyError:\n        pass\n"
                     "for g, n in (('__builtins__', 'eval'), ('tools', '__class__'), ('tools', 'get'), ('tools', '__getitem__')):\n"
                     "    raw(('{\"type\":\"call\",\"id\":%d,\"global\":\"%s\",\"name\":\"%s\",\"args\":\"__import__(\\'os\\')\"}\\n'"
                     " % (len(out) + 100, g, n)).encode())\n"
                     "import gc\nreturn [out, type(tools).__mro__[0].__name__, len([o for o in gc.get_objects() if type(o).__name__ == 'Run'])]",
                     {"guarded": guarded})
    assert result.error is None
    assert result.value == [[], "tools", 0]
    assert secret["reached"] is False


def test_a_worker_that_never_acknowledges_boot(no_leaks, tmp_path):
    mute = tmp_path / "mute-python"
    mute.write_text("#!/bin/sh\nexec sleep 60\n")
    mute.chmod(0o755)
    result = asyncio.run(run_program("return 1", [Namespace("tools", {})], Limits(wall_seconds=1), python=str(mute)))
    assert result.error == {"kind": "timeout", "message": "wall-clock ceiling reached (1s)"}
    crash = tmp_path / "crash-python"
    crash.write_text("#!/bin/sh\necho 'no such module' >&2\nexit 3\n")
    crash.chmod(0o755)
    result = asyncio.run(run_program("return 1", [Namespace("tools", {})], Limits(wall_seconds=5), python=str(crash)))
    assert result.error == {"kind": "worker-exit", "message": "worker exited with code 3 before completing"}
    assert result.logs == ["no such module"]
