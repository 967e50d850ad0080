"""The Landlock launcher: ``python3 -I -S launcher.py ABI NETWORK N READ... M WRITE... -- ARGV...``
(standard library only; no ``json``, ``signal`` or ``enum`` — they would double its start-up).

It builds the ruleset the arguments describe (the kernel's ABI, ``1``/``0`` for the network, N paths
to read, M paths to write), becomes a child
subreaper, and forks: the child puts itself under the ruleset and execs ARGV; the launcher itself stays
outside the domain, so nothing confined can signal it (Landlock's signal scope). When ARGV's process
ends — or the launcher gets SIGTERM/SIGINT/SIGHUP, or its own parent dies — every descendant left
(a ``setsid`` child included: orphans come to the subreaper) is killed and reaped before it exits.
Failures of the launcher itself print ``dshctl-landlock: <detail>`` and exit 125.
"""
import _signal as signal           # the C module: ``signal`` imports ``enum``, a third of our start-up
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import landlock  # noqa: E402  (by path: -I keeps the script's directory off sys.path)

FAILURE_EXIT = 125
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


SIGKILL, SIGTERM, SIGINT, SIGHUP = 9, 15, 2, 1


def fail(detail: str) -> "None":
    sys.stderr.write(f"dshctl-landlock: {detail}\n")
    sys.stderr.flush()
    os._exit(FAILURE_EXIT)


def children() -> list[int]:
    me, out = os.getpid(), []
    for tid in os.listdir(f"/proc/{me}/task"):
        try:
            with open(f"/proc/{me}/task/{tid}/children") as handle:
                out.extend(int(pid) for pid in handle.read().split())
        except OSError:
            pass
    return out


def reap_all() -> None:
    while True:
        for pid in children():
            try:
                os.kill(pid, SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def resolve(program: str) -> str:
    """The first executable file named ``program`` on PATH (a name with a slash is taken as is): a
    search that tries only files that exist, so a PATH entry the sandbox hides is skipped."""
    if "/" in program:
        return program
    for entry in os.environ.get("PATH", "/usr/bin:/bin").split(":"):
        candidate = os.path.join(entry or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return program


def parse(args: list[str]) -> tuple[dict, list[str]]:
    abi, network, n = int(args[0]), args[1] == "1", int(args[2])
    read = args[3:3 + n]
    m = int(args[3 + n])
    write = args[4 + n:4 + n + m]
    rest = args[4 + n + m:]
    if not rest or rest[0] != "--" or len(rest) < 2:
        raise ValueError("no command")
    return {"abi": abi, "network": network, "read": read, "write": write}, rest[1:]


def main() -> None:
    try:
        spec, argv = parse(sys.argv[1:])
    except (ValueError, IndexError):
        fail("usage: launcher.py ABI NETWORK N READ... M WRITE... -- ARGV...")
    libc = landlock._libc()
    try:
        ruleset = landlock.build_ruleset(spec["read"], spec["write"], network=spec["network"], abi=spec["abi"])
    except OSError as exc:
        fail(str(exc))
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail("prctl(PR_SET_CHILD_SUBREAPER) failed")
    launcher = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            if os.getppid() != launcher:
                os._exit(FAILURE_EXIT)
            landlock.add_path(ruleset, f"/proc/{os.getpid()}", landlock.READ_RIGHTS & landlock.handled_fs(spec["abi"]))
            landlock.restrict_self(ruleset)
            os.close(ruleset)
        except OSError as exc:
            fail(str(exc))
        try:
            os.execv(resolve(argv[0]), argv)
        except OSError as exc:
            sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    os.close(ruleset)
    os.closerange(3, 1 << 16)           # the channel and friends belong to the confined process only
    stopped = []

    def stop(signum, _frame):
        stopped.append(signum)
        try:
            os.kill(child, SIGKILL)
        except ProcessLookupError:
            pass
    for signum in (SIGTERM, SIGINT, SIGHUP):
        signal.signal(signum, stop)
    libc.prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0)
    _, status = os.waitpid(child, 0)
    reap_all()
    if stopped:
        os._exit(128 + stopped[0])
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
