"""The shared corpus of real dsh files, as test parameters."""
from __future__ import annotations

import csv
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
if not CORPUS.is_dir():  # the checkout may sit elsewhere; the corpus lives beside /work/main
    CORPUS = Path("/work/shared/corpus")


def index() -> list[dict]:
    with open(CORPUS / "INDEX.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def path_of(row: dict) -> Path:
    return CORPUS / row["repo"].replace("/", "__", 1) / row["path"]


def yaml_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml"))


def ids(paths) -> list[str]:
    return [str(p.relative_to(CORPUS)) for p in paths]
