"""Paths inside a workspace root: anything that resolves outside it (``..``, absolute, symlinks) is refused."""
from __future__ import annotations

from pathlib import Path


class OutsideWorkspace(ValueError):
    pass


class Workspace:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise OutsideWorkspace("a path must be a non-empty string relative to the workspace root")
        target = (self.root / path).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise OutsideWorkspace(f"path {path!r} is outside the workspace root {self.root}; "
                                   "use a path relative to the root")
        return target

    def relative(self, target: Path) -> str:
        rel = target.relative_to(self.root).as_posix()
        return rel or "."

    def key(self, path) -> str:
        """A footprint key for the scheduler (the resolved relative path; unresolvable: the root)."""
        try:
            rel = self.relative(self.resolve(path))
        except (OutsideWorkspace, TypeError):
            return ""
        return "" if rel == "." else rel
