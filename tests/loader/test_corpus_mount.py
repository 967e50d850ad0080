"""Every real entry list of the corpus (presets, profile trees) mounts on the Python host with Node
plugins skipped: the tree has the file's ids and groups, `disabled: !!js` evaluates, and the only
refusals are dshctl's documented id rules."""
from __future__ import annotations

import asyncio
import csv

import pytest

from dshctl.core.yaml.dialect import load_file
from dshctl.loader import Loader, LoaderError

from corpus_files import CORPUS, path_of

RULES = ("duplicate loader entry id", 'contains ":"', "must be a non-empty string")


def entry_lists():
    with open(CORPUS / "INDEX.tsv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t")]
    files = [path_of(r) for r in rows if r["path"].endswith(("agent.cordis.yml", "/cordis.yml"))
             or r["path"] == "cordis.yml"]
    return sorted(f for f in files if f.is_file() and is_tree(load_file(f).value))


def is_tree(rows) -> bool:
    """A tree names a plugin in every row; a file of bare `- id: …` overrides is a patch list."""
    return isinstance(rows, list) and all(isinstance(r, dict) and "name" in r for r in rows)


def flat_ids(rows):
    for row in rows:
        if isinstance(row, dict):
            yield row.get("id")
            config = row.get("config")
            if isinstance(config, list) and (row.get("group") is True or row.get("name") == "cordis:group"):
                yield from flat_ids(config)


FILES = entry_lists()


def test_the_corpus_has_entry_lists():
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_corpus_entry_list_mounts(path, tmp_path):
    rows = load_file(path).value
    if not isinstance(rows, list):
        pytest.fail(f"{path} is not an entry list")

    async def main():
        loader = Loader(home=tmp_path, skip_unavailable=True)
        try:
            report = await loader.start(rows, base_dir=path.parent)
        except LoaderError as err:
            assert any(rule in err.message for rule in RULES), err.message
            return "refused"
        assert [e.id for e in loader.entries()] == list(flat_ids(rows))
        assert not report.by_action("failed"), report.to_json()
        await loader.stop()
        return "mounted"
    assert asyncio.run(main()) in ("mounted", "refused")
