"""The Landlock launcher: ``python3 -I -S launcher.py SPEC -- ARGV...`` (standard library only).

It builds the ruleset SPEC describes (JSON: ``read``, ``write``, ``network``, ``abi``), becomes a child
subreaper, and forks: the child puts itself under the ruleset and execs ARGV; the launcher itself stays
outside the domain, so nothing confined can signal it (Landlock's signal scope). When ARGV's process
ends — or the launcher gets SIGTERM/SIGINT/SIGHUP, or its own parent dies — every descendant left
(a ``setsid`` child included: orphans come to the subreaper) is killed and reaped before it exits.
Failures of the launcher itself print ``dshctl-landlock: <detail>`` and exit 125.
"""
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import landlock  # noqa: E402  (by path: -I keeps the script's directory off sys.path)

FAILURE_EXIT = 125
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


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
                os.kill(pid, signal.SIGKILL)
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


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        fail("usage: launcher.py SPEC -- ARGV...")
    spec, argv = json.loads(args[0]), args[2:]
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
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    _, status = os.waitpid(child, 0)
    reap_all()
    if stopped:
        os._exit(128 + stopped[0])
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


main()
