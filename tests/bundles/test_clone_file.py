"""tree.clone_file: what a profile gets from the store shares nothing writable with it, on the same
file system and across file systems (tmpfs /dev/shm next to the disk, when there is one)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from dshctl.bundles import tree


@pytest.fixture
def targets(tmp_path):
    out = [tmp_path / "same-fs"]
    if os.path.isdir("/dev/shm") and os.stat("/dev/shm").st_dev != os.stat(tmp_path).st_dev:
        out.append(Path(tempfile.mkdtemp(dir="/dev/shm")))
    yield out
    for where in out[1:]:
        shutil.rmtree(where, ignore_errors=True)


@pytest.mark.parametrize("size", [0, 1, 65_537, 3 * 1024 * 1024 + 5])
def test_a_clone_is_an_independent_writable_copy(tmp_path, targets, size):
    src = tmp_path / "store-file"
    data = os.urandom(size)
    src.write_bytes(data)
    os.chmod(src, 0o555)  # as the store keeps an executable
    for where in targets:
        where.mkdir(exist_ok=True)
        dst = where / "copy"
        tree.clone_file(str(src), str(dst), os.stat(src).st_mode)
        assert dst.read_bytes() == data
        st = dst.stat()
        assert st.st_mode & 0o777 == 0o755 and st.st_nlink == 1
        assert (st.st_dev, st.st_ino) != (src.stat().st_dev, src.stat().st_ino)
        with open(dst, "ab") as f:
            f.write(b"profile edit")
        assert src.read_bytes() == data
        with pytest.raises(FileExistsError):  # never over an existing file
            tree.clone_file(str(src), str(dst), 0o444)


def test_make_read_only_leaves_directories_writable(tmp_path):
    (tmp_path / "t/sub").mkdir(parents=True)
    (tmp_path / "t/sub/a.js").write_text("x")
    (tmp_path / "t/run").write_text("y")
    os.chmod(tmp_path / "t/run", 0o755)
    os.symlink("sub/a.js", tmp_path / "t/link")
    tree.make_read_only(tmp_path / "t")
    assert (tmp_path / "t/sub/a.js").stat().st_mode & 0o777 == 0o444
    assert (tmp_path / "t/run").stat().st_mode & 0o777 == 0o555
    assert (tmp_path / "t/sub").stat().st_mode & 0o200
    assert os.readlink(tmp_path / "t/link") == "sub/a.js"
