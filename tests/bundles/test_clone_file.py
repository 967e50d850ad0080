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
        tree.clone_file(str(src), str(dst))
        assert dst.read_bytes() == data
        st = dst.stat()
        assert st.st_mode & 0o777 == 0o755 and st.st_nlink == 1
        assert (st.st_dev, st.st_ino) != (src.stat().st_dev, src.stat().st_ino)
        with open(dst, "ab") as f:
            f.write(b"profile edit")
        assert src.read_bytes() == data
        with pytest.raises(FileExistsError):  # never over an existing file
            tree.clone_file(str(src), str(dst))


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


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o277, 0])
def test_unpacked_files_and_copies_get_their_modes_whatever_the_umask(tmp_path, mask):
    """Files are created with their final mode when the umask leaves it whole (no fchmod) and
    chmod-ed otherwise: either way unpacked npm files are 0644/0755 (npm's), copies of read-only
    store files (git trees) 0644/0755 too."""
    import io
    import subprocess
    import sys
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, mode in (("package/run.sh", 0o755), ("package/lib/a.js", 0o600)):
            info = tarfile.TarInfo(name)
            info.mode, info.size = mode, 2
            tar.addfile(info, io.BytesIO(b"x\n"))
    (tmp_path / "p.tgz").write_bytes(buf.getvalue())
    script = (f"import os; os.umask({mask})\n"
              "from pathlib import Path\n"
              "from dshctl.bundles.limits import Limits\n"
              "from dshctl.bundles.npm.extract import extract\n"
              "from dshctl.bundles.tree import clone_file\n"
              f"root = Path({str(tmp_path)!r})\n"
              "extract(root / 'p.tgz', root / 'unpacked', what='p@1', limits=Limits())\n"
              "extract(root / 'p.tgz', root / 'store', what='p@1', limits=Limits())\n"
              "from dshctl.bundles.tree import make_read_only\n"
              "make_read_only(root / 'store')\n"
              "for name in ('run.sh', 'a.js'):\n"
              "    sub = 'lib/' if name == 'a.js' else ''\n"
              "    clone_file(str(root / 'store' / (sub + name)), str(root / ('copy-' + name)))\n")
    subprocess.run([sys.executable, "-c", script], check=True)
    mode = lambda p: os.stat(tmp_path / p).st_mode & 0o7777  # noqa: E731
    assert mode("unpacked/run.sh") == 0o755 and mode("unpacked/lib/a.js") == 0o644
    assert mode("store/run.sh") == 0o555 and mode("store/lib/a.js") == 0o444  # make_read_only
    assert mode("copy-run.sh") == 0o755 and mode("copy-a.js") == 0o644
