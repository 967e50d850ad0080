"""Tree digests: what verify relies on to notice any modified, missing or added file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.bundles.tree import diff_digests, file_digests, tree_hash

NAMES = st.sampled_from(["a.txt", "b.js", "lib/c.js", "lib/deep/d.yml", "e"])
TREES = st.dictionaries(NAMES, st.binary(max_size=20), max_size=5)


def write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


@settings(max_examples=60, deadline=None)
@given(TREES, TREES)
def test_hash_equal_iff_trees_equal_and_diff_names_every_difference(one, two):
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        write(Path(a), one)
        write(Path(b), two)
        da, db = file_digests(Path(a)), file_digests(Path(b))
        assert (tree_hash(da) == tree_hash(db)) == (one == two)
        diff = diff_digests(da, db)
        assert set(diff["missing"]) == set(one) - set(two)
        assert set(diff["added"]) == set(two) - set(one)
        assert set(diff["modified"]) == {p for p in one if p in two and one[p] != two[p]}


def test_executable_bit_and_link_targets_count(tmp_path):
    write(tmp_path, {"run.sh": b"echo\n"})
    before = tree_hash(file_digests(tmp_path))
    os.chmod(tmp_path / "run.sh", 0o755)
    assert tree_hash(file_digests(tmp_path)) != before
    os.symlink("run.sh", tmp_path / "link")
    assert file_digests(tmp_path)["link"] == "l:run.sh"
