"""Run git against untrusted sources: clean environment, no hooks, no prompts, a protocol allow-list."""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Callable

from dshctl.bundles.specs import GitSpec, is_commit
from dshctl.errors import DshctlError
from dshctl.records import record

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
# Per-command config that beats anything a repository could carry: no hooks, no fsmonitor,
# verify objects on the way in.
_SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                "-c", "transfer.fsckObjects=true", "-c", "protocol.version=2",
                "-c", "core.symlinks=true", "-c", "advice.detachedHead=false",
                "-c", "maintenance.auto=false", "-c", "gc.auto=0"]  # no background git after a fetch
TIMEOUT = 300.0
_KEEP_ENV = ("PATH", "SSH_AUTH_SOCK", "TMPDIR", "LANG", "LC_ALL", "SYSTEMROOT")


class GitError(DshctlError):
    pass


@record
class Git:
    """A git runner whose ``HOME`` is a path of dshctl's that need not exist and is never made:
    git finds no user config there (``GIT_CONFIG_GLOBAL`` and ``GIT_CONFIG_NOSYSTEM`` cover the
    rest), a failed run creates nothing, and a run killed with SIGKILL leaves nothing behind."""

    home: Path

    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        env.update({
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
        })
        return env

    def run(self, args: list[str], *, cwd: Path | None = None, what: str, stdout=None,
            progress: Callable[[str], None] | None = None) -> bytes:
        """Run git; its output is returned, or streamed into the open file ``stdout``.
        ``progress`` gets git's transfer progress (bytes, rate) while it runs (git_progress.py)."""
        import subprocess  # here: a warm run starts no git process and needs no subprocess

        try:
            if progress is not None:
                from dshctl.bundles import git_progress

                code, out, err = git_progress.run(["git", *_SAFE_CONFIG, *args], env=self.env(),
                                                  cwd=cwd, timeout=TIMEOUT, what=what,
                                                  progress=progress)
                proc = subprocess.CompletedProcess(args, code, out, err)
            else:
                proc = subprocess.run(["git", *_SAFE_CONFIG, *args], cwd=cwd, env=self.env(),
                                      stdin=subprocess.DEVNULL, stdout=stdout or subprocess.PIPE,
                                      stderr=subprocess.PIPE, timeout=TIMEOUT)
        except FileNotFoundError:
            raise GitError("git not found on PATH", hint="install git to add bundles from git sources")
        except subprocess.TimeoutExpired:
            raise GitError(f"git timed out after {TIMEOUT:.0f}s while {what}",
                           hint="check the network and the source URL")
        if proc.returncode != 0:
            raise GitError(f"git failed while {what}: {_git_reason(proc.stderr)}",
                           hint="check that the source URL and ref exist and are reachable")
        return proc.stdout or b""


def _git_reason(stderr: bytes) -> str:
    """git's own reason: the first ``fatal:``/``error:`` line, else the last line."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[-1] if lines else "no error output"


def resolve_ref(git: Git, spec: GitSpec) -> str:
    """The commit ``spec.ref`` names on the remote (HEAD when no ref), via one ``git ls-remote``."""
    if is_commit(spec.ref):
        return spec.ref
    out = git.run(["ls-remote", "--", spec.url], what=f"listing refs of {spec.url}")
    refs: dict[str, str] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    if spec.semver is not None:
        return _max_satisfying_tag(refs, spec)
    ref = spec.ref or "HEAD"
    # A peeled tag (annotated tags point at a tag object) wins over the tag object itself.
    names = [ref] if ref == "HEAD" or ref.startswith("refs/") else \
        [f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}"]
    for name in names:
        if name in refs:
            return refs[name]
    hits = sorted({sha for sha in refs.values() if len(ref) >= 7 and sha.startswith(ref.lower())})
    if len(hits) == 1:
        return hits[0]
    raise GitError(f"{spec.url} has no branch, tag or commit named {ref!r}",
                   hint="check the ref after '#'; a commit must be given in full (40 hex digits) "
                        "unless a branch or tag points at it")


def _max_satisfying_tag(refs: dict[str, str], spec: GitSpec) -> str:
    """``#semver:<range>``: the highest tag (``v`` prefix allowed, as pnpm's loose parse) that
    satisfies the range; its peeled commit."""
    from dshctl.bundles.semver import InvalidVersion, Range, Version

    rng = Range.parse(spec.semver or "*")
    best = None
    for name, sha in refs.items():
        if not name.startswith("refs/tags/") or name.endswith("^{}"):
            continue
        tag = name[len("refs/tags/"):]
        try:
            version = Version.parse(tag.lstrip("v="))
        except InvalidVersion:
            continue
        if rng.test(version) and (best is None or version.key() > best[0].key()):
            best = (version, refs.get(f"{name}^{{}}", sha))
    if best is None:
        raise GitError(f"{spec.url} has no tag satisfying {spec.semver!r}",
                       hint="list the tags with git ls-remote --tags, or give a tag or branch")
    return best[1]


def make_bare_repo(repo: Path) -> None:
    """What ``git init --bare`` writes that fetch needs, without a git process: the scratch
    repository lives for one fetch, so hooks, description and info/ are left out."""
    for sub in ("objects", "refs/heads", "refs/tags"):
        (repo / sub).mkdir(parents=True)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
                                 "\tbare = true\n")


def fetch_commit(git: Git, url: str, commit: str, repo: Path,
                 progress: Callable[[str], None] | None = None) -> bool:
    """Fetch ``commit`` into the bare repository ``repo``; True when the shallow fetch worked.

    A depth-1 fetch of one commit needs a server that allows fetching by object id (protocol v2
    servers do); otherwise all branches and tags are fetched and the commit must be among them.
    A shallow fetch by id fails unless the object arrived, so only the fallback checks for it
    here (``export_tree`` peels to a commit; ``check_commit`` names a failure).
    """
    everything = ["+refs/heads/*:refs/remotes/src/*", "+refs/tags/*:refs/tags/*"]
    if _fetch_shallow_or_all(git, url, repo, [commit], f"fetching {commit[:12]} from {url}",
                             progress, fallback=everything):
        return True
    check_commit(git, url, commit, repo)
    return False


def _fetch_shallow_or_all(git: Git, url: str, repo: Path, wanted: list[str], what: str,
                          progress: Callable[[str], None] | None, *, fallback: list[str]) -> bool:
    """``git fetch --depth=1 url wanted`` into a new scratch bare repository ``repo``, else (a
    server that refuses it) ``git fetch url fallback``; True when the shallow fetch worked."""
    make_bare_repo(repo)
    # no fsync of the packs: the repository is scratch, deleted once the tree is exported
    where = ["-c", "core.fsync=none", "--git-dir", str(repo)]
    loud = ["--progress"] if progress else ["--quiet"]  # git's byte counts, parsed as they come
    try:
        git.run([*where, "fetch", *loud, "--no-tags", "--depth=1", "--", url, *wanted],
                what=what, progress=progress)
        return True
    except GitError:
        git.run([*where, "fetch", *loud, "--no-tags", "--", url, *fallback],
                what=f"fetching {url}", progress=progress)
        return False


def fetch_head(git: Git, url: str, repo: Path,
               progress: Callable[[str], None] | None = None) -> tuple[str, bool]:
    """Fetch the remote's HEAD into the bare repository ``repo``: its commit, and whether the
    shallow fetch worked (a dumb HTTP server refuses ``--depth``: then HEAD's whole history)."""
    shallow = _fetch_shallow_or_all(git, url, repo, ["HEAD"], f"fetching {url}", progress,
                                    fallback=["HEAD"])
    try:
        commit = (repo / "FETCH_HEAD").read_text("utf-8").split(None, 1)[0]
    except (OSError, IndexError):
        commit = ""
    if not is_commit(commit):
        raise GitError(f"{url} has no HEAD to fetch", hint="name a branch or tag after '#'")
    return commit, shallow


def check_commit(git: Git, url: str, commit: str, repo: Path) -> None:
    try:
        git.run(["--git-dir", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                what="checking the commit")
    except GitError:
        raise GitError(f"{url} does not contain commit {commit}",
                       hint="the ref may have been force-pushed away; add it again by tag or branch")


def export_tree(git: Git, repo: Path, commit: str, dest: Path) -> None:
    """Write the files of ``commit`` (no ``.git``) into the new directory ``dest``.

    Symbolic links are kept as links only when they stay inside the tree; one that points out
    (absolute, or climbing past the root) refuses the whole package.
    """
    import tarfile  # only a fetch needs it; keeps `dshctl plugin` start-up lean

    archive = repo / "export.tar"
    with open(archive, "wb") as fh:
        git.run(["--git-dir", str(repo), "archive", "--format=tar", f"{commit}^{{commit}}"],
                what="exporting the tree", stdout=fh)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        for member in members:
            _check_member(member)
        tar.extractall(dest, members=members, filter="tar")
    archive.unlink()
    _check_links_resolve_inside(dest)


def _check_links_resolve_inside(root: Path) -> None:
    """Resolve every link through the real tree: a chain of links that each look harmless
    (``x -> .``, ``y -> x/x/../..``) can still climb out, which only resolution reveals."""
    top = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                continue
            target = os.path.realpath(path)
            if target != top and not target.startswith(top + os.sep):
                rel = os.path.relpath(path, root)
                raise UnsafePackage(f"the package holds a symbolic link that resolves outside it: "
                                    f"{rel} -> {os.readlink(path)}")


def _check_member(member) -> None:
    """One ``tarfile.TarInfo`` of the exported tree."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        raise UnsafePackage(f"the package holds a path outside itself: {member.name}")
    if member.issym():
        target = PurePosixPath(member.linkname)
        if target.is_absolute() or not _stays_inside(path.parent, target):
            raise UnsafePackage(f"the package holds a symbolic link that points outside it: "
                                f"{member.name} -> {member.linkname}")
    elif not (member.isfile() or member.isdir()):
        raise UnsafePackage(f"the package holds an unsupported file type: {member.name}")


def _stays_inside(base: PurePosixPath, target: PurePosixPath) -> bool:
    depth = len([p for p in base.parts if p not in ("", ".")])
    for part in target.parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            depth += 1
    return True


class UnsafePackage(DshctlError):
    def __init__(self, message: str):
        super().__init__(message, hint="dshctl never follows links out of a package; ask the bundle's "
                                       "author to ship real files")
