"""One loader entry: a row's options, its place in the tree, its realms and intercepts, its fiber."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshctl.core.yaml.nodes import js_truthy
from dshctl.errors import Loc

if TYPE_CHECKING:  # pragma: no cover
    from dshctl.runtime import Context, Fiber

    from .tree import Tree

# Option keys whose change rebuilds the row's fiber (cordis-runtime.md §6.2).
REPLACE_KEYS = ("name", "inject", "group")
IN_PLACE_KEYS = ("intercept", "isolate", "config")


def is_group_row(row: dict) -> bool:
    """A row whose ``config`` holds rows: ``group: true``, or a ``cordis:group`` row without the
    flag (the Group plugin mounts its rows either way; only the flag keeps the group's own fiber
    up when it is disabled)."""
    return isinstance(row.get("config"), list) and (
        js_truthy(row.get("group")) or row.get("name") == "cordis:group")


def realm_of(service: str, value: Any, full_id: str) -> Any:
    """``isolate: {svc: true}`` is entry-local; a label is shared by every row naming it."""
    if isinstance(value, str):
        return ("label", service, value)  # the runtime's ctx.isolate(name, label) realm
    return ("entry", service, full_id)


def changed_keys(old: dict, new: dict, *, group: bool) -> set[str]:
    """The option keys that differ (a group's ``config`` is its rows, reconciled row by row)."""
    keys = set(old) | set(new)
    if group:
        keys.discard("config")
    return {k for k in keys if old.get(k) != new.get(k) or (k in old) != (k in new)}


class Entry:
    """Loader entries are flat in their tree: every fiber is owned by the tree's owner fiber, and
    groups are structure only. So a group's teardown can never take a moved row with it (§12.3)."""

    def __init__(self, tree: "Tree", entry_id: str, options: dict):
        self.tree = tree
        self.id = entry_id
        self.options = options
        self.parent: Entry | None = None
        self.children: list[Entry] = []
        self.fiber: "Fiber | None" = None
        self.plugin: Any = None
        self.skipped: str | None = None
        self.is_group = False
        self.disabled = False          # not mounted because of its own or an ancestor's flag
        self.realms: dict = {}         # shared with the fiber's context: edited in place
        self.intercepts: dict = {}     # one table of the context's intercept chain: edited in place
        self.subtree: Any = None       # an include's Tree
        self.disposing = False         # the loader is disposing this row's fiber (not the plugin)

    @property
    def full_id(self) -> str:
        return self.tree.prefix + self.id

    @property
    def name(self) -> str:
        name = self.options.get("name")
        return name if isinstance(name, str) else "?"

    @property
    def loc(self) -> Loc | None:
        return getattr(self.options, "loc", None)

    @property
    def declared_dir(self) -> Path:
        """Where ``./`` names resolve: beside the file that declared the row (else the tree base)."""
        return declared_dir(self.options, self.tree.base_dir)

    def parent_ctx(self) -> "Context":
        return self.parent.context() if self.parent is not None else self.tree.owner_ctx

    def context(self) -> "Context":
        """The entry context: the tree owner's fiber, with this row's realms and intercept chain."""
        base = self.parent_ctx()
        return base._derive(realms=self.realms, intercepts=base._intercepts + (self.intercepts,))

    def wanted_realms(self) -> dict:
        parent = self.parent.realms if self.parent is not None else self.tree.owner_ctx._realms
        own = self.options.get("isolate")
        if not own:
            return parent
        wanted = dict(parent)
        if isinstance(own, dict):
            for service, value in own.items():
                if value is True or isinstance(value, str):
                    wanted[service] = realm_of(service, value, self.full_id)
        return wanted

    def refresh_realms(self) -> set[str]:
        """Bring ``realms`` in line with the options and ancestors (in place); the changed names."""
        wanted = self.wanted_realms()
        if wanted == self.realms:
            return set()
        changed = {k for k in set(wanted) | set(self.realms) if wanted.get(k) != self.realms.get(k)}
        if changed:
            self.realms.clear()
            self.realms.update(wanted)
        return changed

    def refresh_intercepts(self) -> bool:
        wanted = self.options.get("intercept")
        wanted = dict(wanted) if isinstance(wanted, dict) else {}
        if wanted == self.intercepts:
            return False
        self.intercepts.clear()
        self.intercepts.update(wanted)
        return True

    def relevant_services(self) -> set[str]:
        """Services whose realm matters to this row's fiber: what it injects or provides."""
        fiber = self.fiber
        if fiber is None:
            return set()
        return set(fiber.inject) | {name for name, _realm in fiber._provided}

    def __repr__(self) -> str:
        return f"<Entry {self.full_id} {self.name}>"


def declared_dir(row: Any, fallback: Path) -> Path:
    loc = getattr(row, "loc", None)
    if loc is not None and loc.file and not loc.file.startswith("<"):
        return Path(loc.file).resolve().parent
    return fallback
