"""Which modules a save invalidates and which plugins go stale: pure functions over an import graph.

``imports`` maps a module name to the names it imports (only modules that matter: local ones and the
externals). The algorithm is cordis-runtime.md §10.2 (Cordis's ``analyzeChanges``, Alg. 8 and 9).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

RELOAD_EVENT = "hmr/reload"   # emitted once per swapped module (§10.2)


def module_file(module: Any) -> Path | None:
    """The ``.py`` file a module was loaded from, resolved; None for built-ins and compiled modules."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return None
    return Path(file).resolve()


def classify(changed: Iterable[str], imports: Mapping[str, Iterable[str]], external: Iterable[str],
             excluded: Callable[[str], bool] = lambda name: False) -> tuple[set[str], set[str]]:
    """``(accepted, declined)``: the changed modules plus the imports that must reload with them.

    A pending module (an import of an accepted one) is accepted when it imports an accepted module,
    declined when all of its non-excluded imports are declined; whatever an import cycle leaves
    undecided is declined.
    """
    accepted = set(changed)
    declined = set(external) - accepted

    def deps(name: str) -> set[str]:
        return {d for d in imports.get(name, ()) if not excluded(d)}

    pending = {d for m in accepted for d in deps(m)} - accepted - declined
    progress = True
    while pending and progress:
        progress = False
        for name in sorted(pending):
            own = deps(name)
            if own & accepted:
                accepted.add(name)
            elif own <= declined:
                declined.add(name)
            else:
                fresh = own - accepted - declined - pending
                if not fresh:
                    continue
                pending |= fresh
                progress = True
                continue
            pending.discard(name)
            progress = True
    declined |= pending
    return accepted, declined


def stale_plugins(plugin_modules: Iterable[str], imports: Mapping[str, Iterable[str]],
                  accepted: set[str], declined: set[str]) -> tuple[list[str], set[str]]:
    """``(stale, accepted')``: plugin modules whose import tree (stopping at declined modules and at
    other plugin modules, which are atomic reload units) reaches an accepted module."""
    plugins = set(plugin_modules)
    accepted = set(accepted)
    stale = []
    for unit in sorted(plugins):
        if unit in declined:
            continue
        stop = declined | (plugins - {unit})
        reach, todo = {unit}, [unit]
        while todo:
            for dep in imports.get(todo.pop(), ()):
                if dep not in reach and dep not in stop:
                    reach.add(dep)
                    todo.append(dep)
        if reach & accepted:
            stale.append(unit)
            accepted |= reach
    return stale, accepted
