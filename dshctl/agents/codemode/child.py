"""The worker side of Code Mode: runs ONE model program in a fresh ``python3 -I -S`` process.

Started by the host as ``python3 -I -S -X utf8 child.py <fd>``; it moves the channel to fd 3, reads the
``boot`` frame, caps itself (``RLIMIT_CPU``, ``RLIMIT_AS``, no core files) with soft = hard so the program
cannot raise them, acknowledges, then runs the ``run`` frame's program as the body of an async function
(top-level ``await`` and ``return`` work). The host is trusted here; the program is not, but it lives in
this process and can do anything this process can, including writing raw frames to fd 3 — the host
validates every frame it reads. Only the standard library is used; ``protocol.py`` (stdlib only) is
loaded from beside this file so both sides share one definition of lossless JSON.
"""
import ast
import asyncio
import builtins
import importlib.util
import io
import json
import linecache
import os
import resource
import select
import socket
import sys
import traceback

PROGRAM_FILE = "<run_code>"
_spec = importlib.util.spec_from_file_location(
    "dshctl_codemode_protocol", os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.py"))
protocol = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(protocol)


class Channel:
    """fd 3: blocking-safe writes (a frame is never interleaved), line reads driven by the event loop."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.inbox = bytearray()

    def send(self, frame: dict) -> None:
        data = memoryview(protocol.encode_frame(frame))
        while data:
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                select.select([], [self.sock], [])
                continue
            except OSError:             # the program closed fd 3 or the host went away
                os._exit(70)
            data = data[sent:]

    def read_line_blocking(self) -> dict:
        while b"\n" not in self.inbox:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                os._exit(0)
            self.inbox += chunk
        return self._pop_line()

    def _pop_line(self) -> dict:
        index = self.inbox.index(b"\n")
        line = bytes(self.inbox[:index])
        del self.inbox[:index + 1]
        return json.loads(line)

    def drain(self) -> list:
        """Non-blocking: every complete frame the host has sent so far."""
        try:
            chunk = self.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return []
        if not chunk:
            os._exit(0)                 # the host closed the channel: the run is over
        self.inbox += chunk
        frames = []
        while b"\n" in self.inbox:
            frames.append(self._pop_line())
        return frames


class LogLedger:
    """Streams captured text eagerly as ``log`` frames until ``maxLogBytes``, then sends the marker once."""

    def __init__(self, channel: Channel, max_bytes: int):
        self.channel, self.max_bytes, self.used, self.closed = channel, max_bytes, 0, False

    def emit(self, text: str) -> None:
        if self.closed:
            return
        cost = len(text.encode("utf-8", "surrogatepass"))
        if self.used + cost > self.max_bytes:
            self.closed = True
            self.channel.send({"type": "log", "text": protocol.log_truncation_marker(self.max_bytes),
                               "truncated": True})
            return
        self.used += cost
        self.channel.send({"type": "log", "text": text.encode("utf-8", "replace").decode("utf-8")})


class CapturedStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr``: one log entry per line, the unterminated rest on flush."""

    def __init__(self, ledger: LogLedger):
        self.ledger, self.pending = ledger, ""

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.ledger.emit(line)
        return len(text)

    def flush(self) -> None:
        if self.pending:
            line, self.pending = self.pending, ""
            self.ledger.emit(line)


def apply_limits(boot: dict) -> None:
    cpu = int(boot["cpuSeconds"])
    # Soft limit raises SIGXCPU (fatal); the hard limit one second later is the kernel's SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    space = int(boot["addressSpaceBytes"])
    resource.setrlimit(resource.RLIMIT_AS, (space, space))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Bridge:
    """Binding calls: one ``call`` frame per ``await tools.name(args)``, settled by the host's ``reply``."""

    def __init__(self, channel: Channel):
        self.channel, self.next_id, self.waiting = channel, 0, {}

    async def call(self, namespace: str, name: str, args, error_class, member_property: str):
        problem = protocol.lossless_violation(args)
        if problem is None and not isinstance(args, (dict, list, str, int, float, bool, type(None))):
            problem = "not a JSON value"
        if problem is not None:
            raise _failure(error_class, member_property, name, f"tool arguments must be lossless JSON ({problem})")
        call_id = self.next_id
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = future
        self.channel.send({"type": "call", "id": call_id, "global": namespace, "name": name, "args": args})
        reply = await future
        if reply.get("ok") is True:
            return reply.get("value")
        raise _failure(error_class, member_property, name, str(reply.get("message", "tool call failed")))

    def deliver(self, frame: dict) -> None:
        future = self.waiting.pop(frame.get("id"), None)
        if future is not None and not future.done():
            future.set_result(frame)


def _failure(error_class, member_property: str, name: str, message: str) -> Exception:
    error = error_class(message)
    setattr(error, member_property, name)
    return error


def make_namespace(bridge: Bridge, spec: dict):
    """The program's ``tools``: members by attribute (``tools.read_file``) or subscript (``tools["a-b"]``).
    Names are data, looked up in a plain dict, so ``tools["__class__"]`` is just an unknown tool."""
    error_spec = spec.get("errorClass") or {"name": "ToolCallError", "memberNameProperty": "toolName"}
    error_class = type(error_spec["name"], (Exception,), {})
    namespace, member_property = spec["global"], error_spec["memberNameProperty"]

    def bind(name):
        async def call(args=None):
            return await bridge.call(namespace, name, args, error_class, member_property)
        call.__name__ = call.__qualname__ = name if name.isidentifier() else "tool"
        return call

    members = {name: bind(name) for name in spec["names"]}

    class Namespace:
        __slots__ = ()

        def __getattr__(self, name):
            if name in members:
                return members[name]
            raise AttributeError(f"{namespace} has no tool {name!r}")

        def __getitem__(self, name):
            if isinstance(name, str) and name in members:
                return members[name]
            raise KeyError(f"{namespace} has no tool {name!r}")

        def __dir__(self):
            return sorted(members)

        def __repr__(self):
            return f"<{namespace}: {len(members)} tools>"

    Namespace.__name__ = Namespace.__qualname__ = type(namespace, (), {}).__name__
    return Namespace(), error_class


def compile_program(program: str):
    """The program as the body of ``async def``. Its statements keep the positions the parser gave them,
    so line and column numbers in every error are the model's own."""
    tree = ast.parse(program, filename=PROGRAM_FILE, mode="exec")
    body = tree.body or [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    fields = {"type_params": []} if "type_params" in ast.AsyncFunctionDef._fields else {}   # 3.12+
    main = ast.AsyncFunctionDef(
        name="__dsh_main__", args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                  kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None,
        lineno=1, col_offset=0, end_lineno=body[-1].end_lineno or 1, end_col_offset=0, **fields)
    module = ast.Module(body=[main], type_ignores=[])
    return compile(module, PROGRAM_FILE, "exec", dont_inherit=True)


def describe_exception(error: BaseException) -> str:
    """Traceback text showing only ``<run_code>`` frames: the worker's own machinery (the tool bridge,
    the bootstrap) is not the model's program, and its positions would only mislead."""
    summary = traceback.TracebackException(type(error), error, error.__traceback__)
    pending, seen = [summary], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        node.stack = traceback.StackSummary.from_list(
            [frame for frame in node.stack if frame.filename == PROGRAM_FILE])
        pending.extend(n for n in (node.__cause__, node.__context__) if n is not None)
    return "".join(summary.format()).rstrip("\n")


def completion_frame(value, max_value_bytes: int) -> dict:
    if value is None:
        return {"type": "done"}
    verdict = protocol.check_done_value(value, max_value_bytes)
    if verdict == "over-budget":
        return {"type": "done", "error": {"kind": "output-limit",
                                          "message": f"program completion exceeds {max_value_bytes} bytes"}}
    if verdict is not None or protocol.lossless_violation(value) is not None:
        problem = protocol.lossless_violation(value) or "not a JSON value"
        return {"type": "done", "error": {"kind": "invalid-output",
                                          "message": f"program completion must be lossless JSON ({problem})"}}
    return {"type": "done", "value": value}


async def execute(channel: Channel, boot: dict, program: str, streams) -> dict:
    bridge = Bridge(channel)
    loop = asyncio.get_running_loop()
    channel.sock.setblocking(False)

    def on_readable():
        for frame in channel.drain():
            if frame.get("type") == "reply":
                bridge.deliver(frame)
    loop.add_reader(channel.sock.fileno(), on_readable)
    scope = {"__name__": "__run_code__", "__builtins__": builtins}
    for spec in boot["namespaces"]:
        namespace, error_class = make_namespace(bridge, spec)
        scope[spec["global"]] = namespace
        scope[error_class.__name__] = error_class
    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    try:
        exec(compile_program(program), scope)
        value = await scope["__dsh_main__"]()
    except BaseException as error:      # SystemExit and KeyboardInterrupt included: the run reports them
        for stream in streams:
            stream.flush()
        return {"type": "done", "error": {"kind": "exception", "message": describe_exception(error)}}
    for stream in streams:
        stream.flush()
    return completion_frame(value, int(boot["maxValueBytes"]))


def main() -> None:
    given = int(sys.argv[1])
    if given != protocol.PROTOCOL_FD:
        os.dup2(given, protocol.PROTOCOL_FD)
        os.close(given)
    channel = Channel(socket.socket(fileno=protocol.PROTOCOL_FD))
    boot = channel.read_line_blocking()
    apply_limits(boot)
    channel.send({"type": "boot-ack"})
    run = channel.read_line_blocking()
    ledger = LogLedger(channel, int(boot["maxLogBytes"]))
    streams = [CapturedStream(ledger), CapturedStream(ledger)]
    sys.stdout, sys.stderr = streams
    # Not asyncio.run: its shutdown waits for executor threads the program may have left blocked.
    loop = asyncio.new_event_loop()
    frame = loop.run_until_complete(execute(channel, boot, run["program"], streams))
    channel.sock.setblocking(True)
    channel.send(frame)
    os._exit(0)                         # no atexit hooks, pending tasks or lingering program threads


if __name__ == "__main__":
    main()
