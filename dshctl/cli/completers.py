"""Completers for values (typer ``autocompletion=``): profile names (``--profile``, ``profile diff``),
row ids (``profile disable/enable/explain/set/unset``), preset ids (``preset show/path/lint``,
``--preset``), installed packages (``plugin remove``) and session ids (``session show/export/archive``), read from
the home the command line names (``--home``) or the default one. Each gets the context parsed so far;
a completer never fails the shell: any error completes nothing.
"""
from __future__ import annotations

from pathlib import Path


def _given(ctx, name: str):
    node = ctx
    while node is not None:
        value = node.params.get(name)
        if value:
            return value
        extra = node.meta.get("dshctl.overrides") or {}
        if extra.get(name):
            return extra[name]
        node = node.parent
    return None


def _home(ctx) -> Path:
    from dshctl.core.home import resolve_home

    return resolve_home(_given(ctx, "home"))


def _quietly(fn):
    def wrapped(ctx, incomplete: str) -> list[str]:
        try:
            return [v for v in fn(ctx) if v.startswith(incomplete)]
        except Exception:  # noqa: BLE001 - a broken home completes nothing
            return []
    return wrapped


@_quietly
def profile_names(ctx) -> list[str]:
    profiles = _home(ctx) / "profiles"
    return sorted(p.name for p in profiles.iterdir() if (p / "package.json").is_file())


@_quietly
def row_ids(ctx) -> list[str]:
    from dshctl.core.compose.composition import compose_profile

    composition = compose_profile(_home(ctx), _given(ctx, "profile") or "web")
    ids: list[str] = []

    def walk(rows):
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                ids.append(row["id"])
                if row.get("group") is True and isinstance(row.get("config"), list):
                    walk(row["config"])  # group children are rows too
    walk(composition.rows)
    return ids


@_quietly
def preset_ids(ctx) -> list[str]:
    from dshctl.core.presets import discover, resolve_roots

    roots, _ = resolve_roots(_home(ctx), _given(ctx, "profile") or "web", None, False)
    return [p.id for p in discover(roots).presets]


@_quietly
def installed_packages(ctx) -> list[str]:
    """``plugin remove``: the packages the profile's manifest depends on (what remove can remove)."""
    import json

    manifest = _home(ctx) / "profiles" / (_given(ctx, "profile") or "web") / "package.json"
    deps = json.loads(manifest.read_text(encoding="utf-8")).get("dependencies") or {}
    return sorted(deps)


@_quietly
def session_ids(ctx) -> list[str]:
    """``session show/export/archive``: the ids of the home's session logs, newest first."""
    from dshctl.agents.session.store import SessionStore

    return [info.id for info in SessionStore(_home(ctx)).list()]
