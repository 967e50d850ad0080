"""The shared corpus of real dsh files, as test parameters."""
from __future__ import annotations

import csv
import os
from pathlib import Path

def _find_corpus() -> Path:
    """The corpus sits in ``shared/`` beside the checkout (as on the dev machines and in CI).

    ``DSHCTL_CORPUS`` overrides. A missing corpus is an error, never a reason to skip: the corpus tests
    are part of what CI must prove.
    """
    candidates = [os.environ.get("DSHCTL_CORPUS", ""),
                  Path(__file__).resolve().parents[1].parent / "shared" / "corpus",
                  "/work/shared/corpus"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "INDEX.tsv").is_file():
            return Path(candidate)
    raise RuntimeError("the shared corpus (shared/corpus/INDEX.tsv) is not beside this checkout; "
                       "set DSHCTL_CORPUS to its path")


CORPUS = _find_corpus()


def index() -> list[dict]:
    with open(CORPUS / "INDEX.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def path_of(row: dict) -> Path:
    return CORPUS / row["repo"].replace("/", "__", 1) / row["path"]


def yaml_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml"))


def ids(paths) -> list[str]:
    return [str(p.relative_to(CORPUS)) for p in paths]
