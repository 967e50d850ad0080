"""npm package-name validation, differentially against npm's own validate-npm-package-name."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.bundles.npm.names import is_inside, is_valid_name

NPM_VALIDATOR = Path(shutil.which("npm") or "/usr/bin/npm").resolve().parent.parent / \
    "node_modules" / "validate-npm-package-name"

CHECK = """
const validate = require(process.argv[1]);
const names = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(names.map(n => validate(n).validForOldPackages)));
"""

PIECES = st.sampled_from(["a", "Z", "0", "-", "_", ".", "..", "/", "@", " ", "~", "'", "!", "(",
                          ")", "*", "%2f", "\\", ":", "node_modules", "favicon.ico", "é", "\n",
                          "\t", "@scope/", "lodash", "JSONStream", "\u00a0", "\x00", "+", "#"])
NAMES = st.lists(PIECES, min_size=0, max_size=6).map("".join)


def npm_says(names: list[str]) -> list[bool]:
    assert NPM_VALIDATOR.is_dir(), f"npm's validate-npm-package-name not at {NPM_VALIDATOR}"
    proc = subprocess.run(["node", "-e", CHECK, str(NPM_VALIDATOR)], input=json.dumps(names),
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(proc.stdout)


@settings(max_examples=8, deadline=None)
@given(st.lists(NAMES, min_size=50, max_size=300))
def test_validity_matches_npm(names):
    assert [is_valid_name(n) for n in names] == npm_says(names)


def test_known_names():
    names = ["lodash", "@types/node", "JSONStream", "a" * 300, "http", "@./x", "@s/.x", "..",
             "../x", "@scope/../../x", "node_modules", "NODE_MODULES", "-x", "_x", " x", "a b",
             "@s/a(b)", "", "@s/", "@/x", "a\\b", "caf\u00e9"]
    ours = [is_valid_name(n) for n in names]
    assert ours == npm_says(names)
    assert ours[:4] == [True, True, True, True] and not any(ours[7:11])


def test_is_inside(tmp_path):
    root = tmp_path / "nm"
    (root / "a").mkdir(parents=True)
    (root / "link").symlink_to(tmp_path)
    assert is_inside(root, root / "a" / "b")
    assert not is_inside(root, root / ".." / "x")
    assert not is_inside(root, root / "link" / "x")  # through a link that leaves
    assert not is_inside(root, root)
