"""``fleet publish`` and ``fleet rollback`` below the CLI: build a revision, write it in one etcd txn.

Publishing composes the profile as ``profile dump`` does (core/compose), refuses any composition
error, patch warning, unsupported ``!!js`` or lint error, then writes ``revisions/<N+1>`` and ``head``
in one transaction guarded by ``head``'s mod revision: of two racing publishers one wins, the other
is refused with the revision it lost to and nothing written.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dshctl.errors import DshctlError, Loc

from . import revision as R
from .etcd import Etcd, compare_mod, put_op
from .keys import Keys


@dataclass
class Head:
    """The head key: a plain number (every host runs it), or during a staged rollout a JSON object
    ``{"revision": K, "stable": S, "canary": [ids], "halted": {...}}``: the canaries run K, the
    others S; a halted rollout has no canaries left (everyone runs S) and says why."""

    number: int          # the newest revision written (0: nothing published yet)
    mod_revision: int    # etcd's mod revision of the head key (0: absent)
    stable: int = 0      # what every host not in ``canary`` runs
    canary: tuple = ()
    halted: dict | None = None

    def wanted(self, host_id: str) -> int:
        return self.number if host_id in self.canary else self.stable

    @classmethod
    def parse(cls, value: str, mod_revision: int) -> "Head":
        value = value.strip()
        if value.isdigit():
            return cls(int(value), mod_revision, int(value))
        try:
            doc = json.loads(value)
            return cls(int(doc["revision"]), mod_revision, int(doc["stable"]), tuple(doc.get("canary") or ()),
                       doc.get("halted"))
        except (ValueError, KeyError, TypeError):
            raise DshctlError(f"the fleet head holds {value[:60]!r}, not a revision",
                              hint="publish again with `dshctl fleet publish`") from None

    def encode(self) -> str:
        if not self.canary and self.halted is None and self.stable == self.number:
            return str(self.number)
        return json.dumps({"revision": self.number, "stable": self.stable, "canary": list(self.canary),
                           "halted": self.halted}, sort_keys=True)


class PublishLost(DshctlError):
    """Another publisher wrote the head first."""


def build(home: Path, profile: str, patches: Sequence[Path] = ()) -> tuple[list[dict], str, str]:
    """``(layer records, rows digest, dump text)`` of the profile, or DshctlError on any problem."""
    from dshctl.core.compose import dump as render
    from dshctl.core.compose.composition import compose_layers, compose_profile
    from dshctl.core.compose.dump_js import unsupported_expressions
    from dshctl.host.lastgood import rows_digest

    comp = compose_profile(home, profile, patches=patches, touches=False)
    warnings = render.warning_records(comp)
    if warnings:
        first = warnings[0]
        raise DshctlError(f"[{first['layer']}] {first['message']} ({len(warnings)} patch warning(s); "
                          "a fleet revision must compose cleanly)",
                          loc=Loc(first["file"], first["line"], first["column"]) if first["file"] else None,
                          hint="fix the patch or its target (`dshctl profile dump` shows the same)")
    js = unsupported_expressions(comp)
    if js:
        raise DshctlError(js[0]["message"], loc=Loc(js[0]["file"], js[0]["line"], js[0]["column"]),
                          hint=js[0]["hint"])
    records = R.layer_records(comp.layers, home, profile)
    _lint(records, home, profile)
    again = compose_layers(R.host_layers(records, home, profile), track=False)
    digest = rows_digest(comp.rows)
    if rows_digest(again.rows) != digest:   # a file changed while we read it: publish nothing
        raise DshctlError("the profile's files changed while publishing", loc=Loc(str(home)),
                          hint="run `dshctl fleet publish` again")
    return records, digest, render.render_yaml(comp)


def _lint(records: list[dict], home: Path, profile: str) -> None:
    from dshctl.core.diagnostics import has_errors
    from dshctl.lint.pipeline import lint_text
    from dshctl.lint.plan import kind_named

    kind = kind_named("cordis.patch")
    for record in records:
        path = R.placed(record["anchor"], record["path"], home, profile)
        diags = lint_text(record["text"], path, kind=kind)
        if has_errors(diags):
            first = next(d for d in diags if d.severity == "error")
            count = sum(d.severity == "error" for d in diags)
            raise DshctlError(f"{first.message} [{first.rule}] ({count} lint error(s); nothing published)",
                              loc=Loc(first.file, first.line, first.column),
                              hint=first.hint or f"run `dshctl lint {path}`")


async def read_head(etcd: Etcd, keys: Keys) -> Head:
    kv = await etcd.get(keys.head)
    if kv is None:
        return Head(0, 0)
    return Head.parse(kv.value, kv.mod_revision)


async def commit(etcd: Etcd, keys: Keys, head: Head, doc: dict, canary: Sequence[str] = ()) -> int:
    """Write ``doc`` as revision ``head.number + 1`` if the head is still ``head``; its number. With
    ``canary`` hosts, only they are to run it (the others stay on the head's stable revision)."""
    number = head.number + 1
    doc = {**doc, "revision": number}
    new_head = Head(number, 0, head.stable if canary else number, tuple(canary))
    ok, _ = await etcd.txn([compare_mod(keys.head, head.mod_revision)],
                           [put_op(keys.revision(number), json.dumps(doc, sort_keys=True)),
                            put_op(keys.head, new_head.encode())])
    if not ok:
        now = await read_head(etcd, keys)
        raise PublishLost(f"another publish won: revision {now.number} was written first; nothing was "
                          f"written for this one", hint="check `dshctl fleet status`, then publish again")
    return number


async def load_revision(etcd: Etcd, keys: Keys, number: int) -> dict:
    kv = await etcd.get(keys.revision(number))
    if kv is None:
        head = await read_head(etcd, keys)
        raise DshctlError(f"there is no revision {number} under {keys.prefix} (the latest is "
                          f"{head.number or 'none'})", hint="`dshctl fleet status` shows the latest")
    try:
        return R.check_document(json.loads(kv.value), keys.revision(number))
    except ValueError:
        raise DshctlError(f"{keys.revision(number)} is not JSON", hint="publish again") from None


async def publish(etcd: Etcd, keys: Keys, home: Path, profile: str, patches: Sequence[Path] = (), *,
                  built: tuple | None = None) -> dict:
    """Build (unless ``built`` is ``build``'s result) and commit; the revision document written."""
    records, digest, dump = built or build(home, profile, patches)   # refusals come before any write
    head = await read_head(etcd, keys)
    doc = R.document(head.number + 1, profile, records, digest, dump)
    doc["revision"] = await commit(etcd, keys, head, doc)
    return doc


async def rollback(etcd: Etcd, keys: Keys, to: int) -> dict:
    """A new revision whose content is revision ``to``'s: history only grows."""
    old = await load_revision(etcd, keys, to)
    head = await read_head(etcd, keys)
    doc = R.document(head.number + 1, old["profile"], old["layers"], old["digest"], old.get("dump", ""),
                     rollback_of=to)
    doc["revision"] = await commit(etcd, keys, head, doc)
    return doc
