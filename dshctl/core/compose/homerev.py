"""A dsh home as it was at a git revision: ``git archive`` of the home's subtree into a temp dir."""
from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Iterator

from dshctl.errors import DshctlError, Loc


def _git(home: Path, *args: str, binary: bool = False):
    try:
        proc = subprocess.run(["git", "-C", str(home), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise DshctlError("git is not installed", hint="install git to diff against a revision") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DshctlError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else proc.returncode}",
                          loc=Loc(str(home)),
                          hint="the home must be inside a git repository and the revision must exist")
    return proc.stdout if binary else proc.stdout.decode("utf-8").strip()


@contextlib.contextmanager
def home_at_revision(home: Path, rev: str) -> Iterator[Path]:
    """Yield a directory holding the home's tracked files at ``rev`` (removed afterwards)."""
    home = Path(home)
    _git(home, "rev-parse", "--is-inside-work-tree")
    try:
        _git(home, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except DshctlError:  # --quiet: git says nothing, so say which revision is missing
        raise DshctlError(f"unknown git revision {rev!r} in the repository of the home", loc=Loc(str(home)),
                          hint="use a commit, branch or tag that exists, e.g. git:HEAD or git:HEAD~1"
                          ) from None
    # Run from the home, git archive takes "." as the home's subtree and writes paths relative to it.
    data = _git(home, "archive", "--format=tar", rev, "--", ".", binary=True)
    with tempfile.TemporaryDirectory(prefix="dshctl-rev-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)
