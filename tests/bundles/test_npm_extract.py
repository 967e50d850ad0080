"""npm tarball extraction: the tree it writes is what the members say (property test), for gzip,
multi-member gzip and plain tar alike; a tarball inflating past the limits is refused."""
from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.bundles.limits import Limits, TooLarge
from dshctl.bundles.npm.extract import extract
from dshctl.bundles.tree import file_digests

NAMES = st.sampled_from(["a", "b", "lib", "x.js", "index.js", "d"])
MEMBERS = st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3).map("/".join),
                             st.sampled_from(["file", "dir"]), st.binary(max_size=300),
                             st.sampled_from([0o644, 0o755, 0o600, 0o744])), max_size=25)


def tarball(members, packing: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, kind, data, mode in members:
            info = tarfile.TarInfo("package/" + path)
            info.mode = mode
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    if packing == "tar":
        return raw
    if packing == "gzip":
        return gzip.compress(raw)
    half = len(raw) // 2  # two gzip members, as `cat a.gz b.gz` makes
    return gzip.compress(raw[:half]) + gzip.compress(raw[half:])


def expected(members) -> dict | None:
    """Tar semantics: in order, a later member of a path replaces the earlier one; None when a
    member would need a file as its directory (the extractor refuses such a tarball)."""
    tree: dict[str, object] = {}
    for path, kind, data, mode in members:
        parts = path.split("/")
        for i in range(1, len(parts)):
            if isinstance(tree.get("/".join(parts[:i])), tuple):
                return None
            tree["/".join(parts[:i])] = "dir"
        if kind == "dir":
            if isinstance(tree.get(path), tuple):
                return None  # mkdir over a file
            tree[path] = "dir"
        else:
            for key in [k for k in tree if k == path or k.startswith(path + "/")]:
                del tree[key]
            tree[path] = (data, 0o755 if mode & 0o111 else 0o644)  # npm's modes
    return tree


def on_disk(root) -> dict:
    out: dict[str, object] = {}
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = (fh.read(), stat.S_IMODE(os.lstat(path).st_mode))
    return out


@settings(max_examples=150, deadline=None)
@given(MEMBERS, st.sampled_from(["gzip", "tar", "two-gzip-members"]))
def test_the_tree_is_what_the_members_say(tmp_path_factory, members, packing):
    dest = tmp_path_factory.mktemp("x") / "pkg"
    want = expected(members)
    try:
        extract(tarball(members, packing), dest, what="pkg@1.0.0", limits=Limits())
    except Exception as exc:  # noqa: BLE001 - only the refusal of an impossible tarball
        assert want is None, exc
        assert not dest.exists()  # nothing remains of a refused package
        return
    assert want is not None and on_disk(dest) == want


def test_a_tarball_inflating_past_the_limits_is_refused_while_streaming(tmp_path):
    members = [("big.bin", "file", b"\0" * (3 * 1024 * 1024), 0o644),
               ("index.js", "file", b"x", 0o644)]
    data = tarball(members, "gzip")
    assert len(data) < 20_000  # small on the wire, big unpacked
    small = Limits(total_bytes=1024 * 1024, files=10, file_bytes=8 * 1024 * 1024)
    with pytest.raises(TooLarge, match="unpacks to more than 1 MB"):
        extract(data, tmp_path / "a", what="bomb@1.0.0", limits=small)
    assert not (tmp_path / "a").exists()
    extract(data, tmp_path / "b", what="bomb@1.0.0", limits=Limits())
    assert (tmp_path / "b" / "big.bin").stat().st_size == 3 * 1024 * 1024


LINKED = st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3).map("/".join),
                            st.sampled_from(["file", "dir", "link", "hardlink"]),
                            st.binary(max_size=300), st.sampled_from([0o644, 0o755]),
                            st.sampled_from(["x.js", "a", "lib/x.js", "../x.js", "."])), max_size=25)


def linked_tarball(members) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, kind, data, mode, target in members:
            info = tarfile.TarInfo("package/" + path)
            info.mode = mode
            if kind in ("link", "hardlink"):
                info.type = tarfile.SYMTYPE if kind == "link" else tarfile.LNKTYPE
                info.linkname = target if kind == "link" else "package/" + target
                tar.addfile(info)
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue())


@settings(max_examples=200, deadline=None)
@given(LINKED)
def test_the_digests_extract_returns_are_those_of_the_tree_it_wrote(tmp_path_factory, members):
    """The store records extract's digests instead of reading the files back: they must be what
    `plugin verify` computes from the tree, through replaced members, links and dropped hard links."""
    dest = tmp_path_factory.mktemp("x") / "pkg"
    try:
        returned = extract(linked_tarball(members), dest, what="pkg@1.0.0", limits=Limits())
    except Exception:  # noqa: BLE001 - refused (a link out, through a link, a file as a directory)
        assert not dest.exists()
        return
    assert returned == file_digests(dest)
    assert list(returned) == sorted(returned)
