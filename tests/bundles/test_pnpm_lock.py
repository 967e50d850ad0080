"""pnpm-lock.yaml as pnpm 11 writes it: scalars read back as the same strings, and the closure of a
dependency dshctl does not manage is kept (tests/dsh/test_plugin_interop.py compares whole files
with real pnpm's)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from dshctl.bundles import pnpm_lock
from dshctl.bundles.lock import LockEntry

SHA = "0123456789abcdef0123456789abcdef01234567"


@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30))
def test_every_scalar_reads_back_as_the_same_string(text):
    doc = YAML(typ="safe", pure=True).load(f"k: {pnpm_lock._scalar(text)}\n")
    assert doc["k"] == text


def test_pnpm_quoting_of_the_forms_real_pnpm_wrote():
    assert pnpm_lock._scalar("@sc/dsh-scoped") == "'@sc/dsh-scoped'"
    assert pnpm_lock._scalar("9.0") == "'9.0'"
    for plain in ("^1.1.0", "1.0.0", "git://127.0.0.1/dsh-a.git#main", "git+file:///x.git#v1"):
        assert pnpm_lock._scalar(plain) == plain


def test_a_dependency_dshctl_does_not_manage_keeps_its_whole_closure():
    old = pnpm_lock.PnpmLock(
        importer={"dsh-c": {"specifier": "git://h/c.git", "version": f"git+git://h/c.git#{SHA}"},
                  "gone": {"specifier": "^1.0.0", "version": "1.0.0"}},
        packages={f"dsh-c@git+git://h/c.git#{SHA}": {"resolution": {"commit": SHA}},
                  "lib-x@1.0.0": {"resolution": {"integrity": "sha512-x"}},
                  "gone@1.0.0": {"resolution": {"integrity": "sha512-g"}}},
        snapshots={f"dsh-c@git+git://h/c.git#{SHA}": {"dependencies": {"lib-x": "1.0.0"}},
                   "lib-x@1.0.0": {}, "gone@1.0.0": {}})
    mine = LockEntry(spec="git://h/a.git#main", url="git://h/a.git", ref="main", commit=SHA,
                     version="1.0.0", integrity="sha256-0")
    new = pnpm_lock.build({"dsh-a": mine}, {"dsh-a": "git://h/a.git#main", "dsh-c": "git://h/c.git"},
                          old, lambda name: "http://r/")
    assert set(new.importer) == {"dsh-a", "dsh-c"}
    assert "lib-x@1.0.0" in new.packages and "gone@1.0.0" not in new.packages
    text = pnpm_lock.render(new)
    assert pnpm_lock.read_text(text).importer == new.importer


@given(st.recursive(st.none() | st.booleans() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["importers", ".", "dependencies", "packages", "snapshots",
                                         "dsh-a", "specifier", "version", "resolution"]), inner,
                        max_size=3), max_leaves=12))
def test_a_lock_of_any_shape_reads_without_a_crash(data):
    import json

    lock = pnpm_lock.read_text(json.dumps(data))
    for name, entry in lock.importer.items():
        lock.pinned(name, str(entry.get("specifier")))
        lock.closure(name)
