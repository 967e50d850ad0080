"""One program on a real worker process: the async-body contract, output, errors at the model's own
positions, the budgets (CPU, memory, wall clock, logs, completion value) and their failure kinds."""
import asyncio
import os

from dshctl.agents.codemode.protocol import log_truncation_marker
from dshctl.agents.codemode.runtime import Limits, Namespace, run_program
from tests.agents.codemode_helpers import FAST, fd_links, run, scratch_dirs


async def echo(args):
    return {"echo": args}


def test_top_level_await_return_and_print():
    result = run("x = await tools.echo({'a': 1})\nprint('got', x['echo']['a'])\n"
                 "y = await tools['my-tool']([1, 2])\nreturn {'x': x, 'y': y}", {"echo": echo, "my-tool": echo})
    assert result.error is None
    assert result.logs == ["got 1"]
    assert result.value == {"x": {"echo": {"a": 1}}, "y": {"echo": [1, 2]}}


def test_no_return_means_no_value_and_stderr_is_captured_too():
    result = run("import sys\nprint('a\\nb')\nprint('c', end='')\nsys.stderr.write('warn\\n')")
    assert result.error is None and not result.has_value
    # One entry per line; an unterminated line is flushed when the program ends.
    assert result.logs == ["a", "b", "warn", "c"]


def test_errors_carry_the_models_own_line_and_column():
    syntax = run("x = 1\nif x:\n    y = (1,\n")
    assert syntax.error["kind"] == "exception"
    assert 'File "<run_code>", line 3' in syntax.error["message"]
    raised = run("def f():\n    return 1 / 0\n\nawait tools.echo({})\nf()", {"echo": echo})
    message = raised.error["message"]
    assert 'File "<run_code>", line 5' in message and 'File "<run_code>", line 2, in f' in message
    assert "ZeroDivisionError" in message and "child.py" not in message
    column = run("x = 1\nx = )")
    assert "line 2" in column.error["message"] and "    x = )\n        ^" in column.error["message"]


def test_a_failed_tool_call_raises_tool_call_error_with_the_tool_name():
    async def broken(args):
        raise ValueError("disk on fire")
    result = run("try:\n    await tools.broken({})\nexcept ToolCallError as e:\n    return [e.toolName, str(e)]",
                 {"broken": broken})
    assert result.value == ["broken", "disk on fire"]
    unknown = run("return type(tools.nope).__name__")
    assert unknown.error["kind"] == "exception" and "tools has no tool 'nope'" in unknown.error["message"]


def test_lossless_boundaries_both_ways():
    assert run("return 2**60").value == 2 ** 60
    assert run("return 2**60 + 1").error["kind"] == "invalid-output"
    assert run("return float('inf')").error["kind"] == "invalid-output"
    assert run("return -0.0").error["kind"] == "invalid-output"
    assert run("return (1, 2)").error["kind"] == "invalid-output"
    assert run("return {1: 'a'}").error["kind"] == "invalid-output"
    bad_args = run("await tools.echo({'n': float('nan')})", {"echo": echo})
    assert bad_args.error["kind"] == "exception" and "lossless JSON" in bad_args.error["message"]

    async def lossy(args):
        return float("inf")
    answered = run("try:\n    await tools.lossy({})\nexcept ToolCallError as e:\n    return str(e)", {"lossy": lossy})
    assert answered.value == "binding resolution must be lossless JSON"


def test_completion_value_budget():
    limits = Limits(cpu_seconds=5, wall_seconds=20, max_value_bytes=100)
    assert run("return 'x' * 98", limits=limits).value == "x" * 98
    over = run("return 'x' * 99", limits=limits)
    assert over.error == {"kind": "output-limit", "message": "program completion exceeds 100 bytes"}


def test_log_budget_ends_with_one_marker():
    limits = Limits(cpu_seconds=5, wall_seconds=20, max_log_bytes=100)
    result = run("for i in range(100):\n    print('line', i)\nprint('" + log_truncation_marker(100) + "')",
                 limits=limits)
    assert result.error is None
    assert result.logs[-1] == log_truncation_marker(100)
    assert result.logs.count(log_truncation_marker(100)) == 1
    assert sum(len(line) for line in result.logs[:-1]) <= 100


def test_cpu_budget_stops_a_hot_loop():
    result = run("while True:\n    pass", limits=Limits(cpu_seconds=1, wall_seconds=60))
    assert result.error == {"kind": "timeout", "message": "CPU budget exhausted (1s of CPU time)"}


def test_wall_clock_stops_a_sleeper_and_abort_stops_a_run():
    slow = run("import asyncio\nawait asyncio.sleep(30)", limits=Limits(cpu_seconds=5, wall_seconds=0.5))
    assert slow.error == {"kind": "timeout", "message": "wall-clock ceiling reached (0.5s)"}

    async def aborted():
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, event.set)
        return await run_program("import asyncio\nawait asyncio.sleep(30)", [Namespace("tools", {})], FAST,
                                 abort=event)
    assert asyncio.run(aborted()).error == {"kind": "abort", "message": "the turn was aborted"}


def test_memory_limit_is_a_clean_failure():
    result = run("x = bytearray(800 * 1024 * 1024)\nreturn len(x)",
                 limits=Limits(cpu_seconds=5, wall_seconds=20, address_space_bytes=256 << 20))
    assert result.error["kind"] == "exception" and "MemoryError" in result.error["message"]


def test_isolation_scrubbed_env_scratch_cwd_no_inherited_fds():
    before = scratch_dirs()
    os.environ["DSHCTL_SECRET_FOR_TEST"] = "s3cret"
    try:
        result = run("import os, resource\nfds = {}\nfor f in os.listdir('/proc/self/fd'):\n    try:\n"
                     "        fds[f] = os.readlink('/proc/self/fd/' + f)\n    except OSError:\n        pass\n"
                     "return {'env': dict(os.environ), 'cwd': os.getcwd(), 'fds': fds, "
                     "'as': resource.getrlimit(resource.RLIMIT_AS)[0], 'pgid': os.getpgid(0) == os.getpid()}")
    finally:
        del os.environ["DSHCTL_SECRET_FOR_TEST"]
    value = result.value
    assert "DSHCTL_SECRET_FOR_TEST" not in value["env"] and set(value["env"]) <= {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PWD"}
    assert os.path.basename(value["cwd"]).startswith(f"dshctl-code-{os.getpid()}-")
    assert not os.path.exists(value["cwd"])             # the scratch directory went with the run
    # Beyond stdin/stdout/stderr and the channel: only what the worker's own event loop opened.
    host_links = set(fd_links().values())
    fds = {int(k): v for k, v in value["fds"].items()}
    assert {0, 1, 2, 3} <= set(fds) and fds[0] == "/dev/null"
    assert all(link == "anon_inode:[eventpoll]" or (link.startswith("socket:") and link not in host_links)
               for fd, link in fds.items() if fd > 3 and not link.startswith("/proc/"))
    assert value["as"] == FAST.address_space_bytes and value["pgid"] is True
    assert scratch_dirs() == before


def test_runs_share_nothing():
    assert run("import builtins\nbuiltins.leak = 1\nreturn 1").value == 1
    assert run("import builtins\nreturn hasattr(builtins, 'leak')").value is False


def test_a_pre_started_worker_serves_one_run_only():
    # A worker is known by its scratch directory (its cwd): inside the sandbox's PID namespace its own
    # pid is not the host's.
    from dshctl.agents.codemode.pool import WorkerPool
    from tests.agents.codemode_helpers import alive

    async def main():
        pool = WorkerPool(1)
        pool.prestart()
        await asyncio.sleep(0.05)
        waiting = {w.scratch for w in pool.idle}
        assert len(waiting) == 1
        workers = []
        for _ in range(3):
            worker = pool.take()
            result = await run_program("import os\nreturn os.getcwd()", [Namespace("tools", {})], FAST,
                                       worker=worker)
            workers.append((result.value, worker.pid))
            pool.prestart()
            await asyncio.sleep(0.05)
        assert workers[0][0] in waiting and len({cwd for cwd, _ in workers}) == 3   # never one twice
        assert not any(alive(pid) for _, pid in workers)
        idle = pool.idle_pids()
        pool.close()
        assert pool.idle == [] and not any(alive(pid) for pid in idle)
    asyncio.run(main())


def test_output_written_around_the_streams_is_captured():
    result = run("import os, subprocess\nos.write(1, b'raw out\\n')\nsubprocess.run(['echo', 'from a child'])\n"
                 "return 1")
    assert "raw out" in result.logs and "from a child" in result.logs


def test_a_thread_left_blocking_does_not_hold_the_result():
    result = run("import asyncio, time\nasyncio.get_running_loop().run_in_executor(None, time.sleep, 30)\nreturn 'ok'",
                 limits=Limits(cpu_seconds=5, wall_seconds=5))
    assert result.value == "ok"
