"""What a fleet revision holds, and how a host turns one back into layers (docs/fleet.md).

A revision is the *input* of the composition, not its output: the text of every layer
``profile dump`` composes (bundle layers, the profile and home user layers, ``--patch`` files), each
with its kind and a path relative to an anchor (the profile directory, the home, or absolute). A
host puts each file at the same place under its own home and profile, parses the published text
there and composes exactly as the publisher did; so rows keep their ``file:line:col`` (naming the
host's copy of the file) and ``./plugin`` names resolve beside the host's installed bundle. The
revision also carries the publisher's digest of the composed rows and the dump itself, so anyone can
check that a host runs what was published.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Sequence

from dshctl.core.compose import layers as L
from dshctl.core.compose.profile import profile_dir
from dshctl.errors import DshctlError, Loc

FORMAT = "dshctl-fleet-revision/1"
PROFILE, HOME, ABSOLUTE = "profile", "home", "absolute"


def anchored(path: Path, home: Path, profile: str) -> tuple[str, str]:
    """``(anchor, relative path)`` of a layer file: inside the profile directory, the home, or neither."""
    path = Path(os.path.abspath(path))
    for anchor, base in ((PROFILE, profile_dir(home, profile)), (HOME, Path(os.path.abspath(home)))):
        try:
            return anchor, path.relative_to(Path(os.path.abspath(base))).as_posix()
        except ValueError:
            continue
    return ABSOLUTE, str(path)


def placed(anchor: str, rel: str, home: Path, profile: str) -> Path:
    """Where a published layer file sits on this host."""
    if anchor == PROFILE:
        return Path(os.path.abspath(profile_dir(home, profile))) / rel
    if anchor == HOME:
        return Path(os.path.abspath(home)) / rel
    return Path(rel)


def layer_records(layers: Sequence[L.Layer], home: Path, profile: str) -> list[dict]:
    """The published form of ``layers`` (their files are read again: the text is what is published)."""
    from dshctl.core.yaml.dialect import read_text

    out = []
    for layer in layers:
        if layer.path is None:   # the launcher layer: each host computes its own
            continue
        anchor, rel = anchored(layer.path, home, profile)
        out.append({"kind": layer.kind, "label": layer.label if layer.kind == L.BUNDLE else None,
                    "anchor": anchor, "path": rel, "text": read_text(layer.path)})
    return out


def host_layers(records: list[dict], home: Path, profile: str) -> list[L.Layer]:
    """The published layers parsed at their places on this host (raises DshctlError)."""
    out = []
    for record in records:
        path = placed(record["anchor"], record["path"], home, profile)
        kind = record["kind"]
        word = "patches" if kind == L.HOME else "overlay"   # dsh's boot-time labels (layers.py)
        patches = L.parse_patch_text(record["text"], path, word)
        label = record["label"] if kind == L.BUNDLE and record.get("label") else str(path)
        out.append(L.Layer(label, path, kind, patches))
    return out


def document(number: int, profile: str, records: list[dict], digest: str, dump: str, *,
             rollback_of: int | None = None) -> dict:
    doc = {"format": FORMAT, "revision": number, "profile": profile, "published_at": now_iso(),
           "publisher": os.uname().nodename, "digest": digest, "layers": records, "dump": dump}
    if rollback_of is not None:
        doc["rollback_of"] = rollback_of
    return doc


def check_document(doc, where: str) -> dict:
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("revision"), int)
            and isinstance(doc.get("layers"), list) and all(_layer_ok(x) for x in doc["layers"])):
        raise DshctlError(f"{where} is not a dshctl fleet revision ({FORMAT})", loc=Loc(where),
                          hint="publish with `dshctl fleet publish`; do not write under the prefix by hand")
    return doc


def _layer_ok(record) -> bool:
    return (isinstance(record, dict) and record.get("anchor") in (PROFILE, HOME, ABSOLUTE)
            and all(isinstance(record.get(k), str) for k in ("kind", "path", "text")))


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
