"""The persistent caches (lint results, preset roster) give exactly what a cold run gives, after
any edit, rename, touch, truncation or deletion between runs, and are really used (parse counts).
A damaged or foreign cache entry is rebuilt, never trusted."""
from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path

import pytest

from dshctl.core.cache import disk as diskcache
from dshctl.core.cache.lint import lint_with_cache
from dshctl.core.presets import Root, ScanCache, discover, load_scan_cache, save_scan_cache
from dshctl.core.yaml.filekinds import discover as lintable
from dshctl.lint.parallel import lint_jobs
from dshctl.lint.pipeline import lint_paths

from test_cli_conventions import run_main

FILES = {
    "a/cordis.yml": "- id: one\n  name: '@dshctl/logger'\n  config:\n    level: info\n",
    "a/cordis.patch.yml": "- id: one\n  disabled: true\n",
    "b/agent.cordis.yml": "- id: tools\n  name: '@dshctl/tools'\n  disabled: !!js process.env.X === '1'\n",
    "b/preset.yml": "name: B\norder: 2\n",
    "c/cordis.yml": "- name: a\n  name: b\n",  # a parse error
    "c/package.json": '{"name": "x", "dsh": {"profile": {"bundles": 3}}}\n',
    "d/other.overlay.yml": "- id: x\n  config: {port: 80}\n",
}
EDITS = ["- id: two\n  name: 12\n", "- id: one\n  disabled: yes\n", "not: [closed\n", "", "- 1\n- 2\n",
         "- id: one\n  name: '@dshctl/logger'\n  config:\n    level: warn\n"]


def write_tree(root: Path) -> None:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def mutate(root: Path, rng: random.Random) -> str:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    target = rng.choice(files)
    action = rng.choice(["edit", "same-size", "rename", "touch", "truncate", "delete", "add", "restore-mtime"])
    if action == "edit":
        target.write_text(rng.choice(EDITS))
    elif action == "same-size":  # same length, different bytes
        data = bytearray(target.read_bytes() or b"x")
        data[rng.randrange(len(data))] = ord(rng.choice("ab: -\n"))
        target.write_bytes(bytes(data))
    elif action == "rename":
        kinds = ["cordis.yml", "cordis.patch.yml", "x.overlay.yml", "agent.cordis.yml", "preset.yml"]
        new = target.parent / rng.choice(kinds)
        if not new.exists():
            target.rename(new)
    elif action == "touch":
        os.utime(target)
    elif action == "truncate":
        with open(target, "r+b") as fh:
            fh.truncate(rng.randrange(0, max(1, target.stat().st_size)))
    elif action == "delete":
        target.unlink()
    elif action == "add":
        d = root / rng.choice("abcde")
        d.mkdir(exist_ok=True)
        (d / rng.choice(["cordis.yml", "cordis.patch.yml", "agent.cordis.yml"])).write_text(rng.choice(EDITS))
    else:  # new bytes of the same size, then the old mtime put back (only ctime tells)
        st = target.stat()
        data = bytearray(target.read_bytes() or b"x")
        data[0] = ord("#") if data[0] != ord("#") else ord("-")
        target.write_bytes(bytes(data))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return f"{action} {target.relative_to(root)}"


def cached_lint(root: Path, rule_config=None) -> tuple[list, int, int]:
    return lint_with_cache(lintable([root]), rule_config, lambda jobs: lint_jobs(jobs, rule_config, 1))


def test_lint_cache_always_equals_a_cold_run(tmp_path):
    root = tmp_path / "tree"
    write_tree(root)
    rng = random.Random(13)
    first = cached_lint(root)
    assert first[:2] == lint_paths([root]) and first[2] == len(FILES)  # cold: every file linted
    again = cached_lint(root)
    assert again == (first[0], first[1], 0)  # nothing changed: nothing parsed
    for step in range(60):
        what = mutate(root, rng)
        diags, count, linted = cached_lint(root)
        assert (diags, count) == lint_paths([root]), f"step {step}: {what}"
        assert linted <= 2, f"step {step}: {what}: {linted} files re-linted for one change"
        assert cached_lint(root)[2] == 0


def test_lint_cache_keys_on_the_rule_configuration(tmp_path):
    write_tree(tmp_path)
    everything = cached_lint(tmp_path)
    only_parse = cached_lint(tmp_path, {"select": ["parse"]})
    assert only_parse[2] == everything[2]  # another configuration: every file linted again
    assert only_parse[:2] == lint_paths([tmp_path], {"select": ["parse"]})
    assert {d.rule for d in only_parse[0]} == {"parse"} != {d.rule for d in everything[0]}
    assert cached_lint(tmp_path)[2] == 0 and cached_lint(tmp_path, {"select": ["parse"]})[2] == 0


def test_damaged_lint_entries_are_rebuilt(tmp_path):
    write_tree(tmp_path / "tree")
    first = cached_lint(tmp_path / "tree")
    entries = sorted(p for p in (Path(os.environ["XDG_CACHE_HOME"]) / "dshctl" / "lint").rglob("*") if p.is_file())
    for i, entry in enumerate(entries):  # every way an entry can be unreadable
        data = entry.read_bytes()
        entry.write_bytes([b"", data[: len(data) // 2], data[:-1] + b"]", b"garbage\n" * 9][i % 4])
    again = cached_lint(tmp_path / "tree")
    assert again[:2] == first[:2]


def test_cli_lint_cached_equals_no_cache_and_parallel(capsys, tmp_path):
    root = tmp_path / "tree"
    write_tree(root)
    for i in range(40):  # enough files for several workers
        (root / f"many{i}").mkdir()
        (root / f"many{i}" / "cordis.yml").write_text(EDITS[i % len(EDITS)])
    outs = {}
    for label, args in [("cold", ["--no-cache", "-j", "1"]), ("fill", ["-j", "2"]), ("hit", []),
                        ("parallel", ["--no-cache", "-j", "2"]), ("root-option", ["--jobs", "3"])]:
        prefix = ["--no-cache"] if label == "root-option" else []
        code, out, err = run_main(capsys, *prefix, "lint", "-f", "json", *args, root)
        outs[label] = (code, out, err)
    assert len({v for v in outs.values()}) == 1, outs
    assert json.loads(outs["cold"][1])  # the tree has findings


# -- the preset roster ----------------------------------------------------------------------------

def roster_json(roots, cache) -> str:
    roster = discover(roots, cache=cache)
    return json.dumps([[p.to_dict() for p in roster.presets], [p.to_dict() for p in roster.shadowed],
                       [(str(s.path), s.reason) for s in roster.skipped]], sort_keys=True)


def make_roots(base: Path) -> list[Root]:
    roots = [Root(base / "r0", "system"), Root(base / "r1")]
    for i in range(12):
        d = roots[i % 2].path / f"p{i % 8}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "agent.cordis.yml").write_text(EDITS[i % len(EDITS)])
        if i % 3:
            (d / "preset.yml").write_text(f"name: P{i}\norder: {i % 4}\n")
    return roots


def mutate_presets(roots: list[Root], rng: random.Random) -> str:
    action = rng.choice(["edit", "rename", "touch", "truncate", "delete", "add", "restore-mtime", "meta"])
    presets = sorted(p for r in roots for p in r.path.iterdir())
    target = rng.choice(presets)
    comp = target / "agent.cordis.yml"
    if action == "edit" and comp.exists():
        comp.write_text(rng.choice(EDITS))
    elif action == "rename":
        new = rng.choice(roots).path / f"q{rng.randrange(100)}"
        if not new.exists():
            target.rename(new)
    elif action == "touch" and comp.exists():
        os.utime(comp)
    elif action == "truncate" and comp.exists():
        with open(comp, "r+b") as fh:
            fh.truncate(rng.randrange(0, max(1, comp.stat().st_size)))
    elif action == "delete":
        shutil.rmtree(target)
    elif action == "add":
        d = rng.choice(roots).path / f"n{rng.randrange(100)}"
        d.mkdir(exist_ok=True)
        (d / "agent.cordis.yml").write_text(rng.choice(EDITS))
    elif action == "restore-mtime" and comp.exists():
        st = comp.stat()
        data = bytearray(comp.read_bytes() or b"x")
        data[0] = ord("#") if data[0] != ord("#") else ord("-")
        comp.write_bytes(bytes(data))
        os.utime(comp, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        (target / "preset.yml").write_text(rng.choice(["name: X\n", "order: [1]\n", "::\n", ""]))
    return f"{action} {target.name}"


def test_roster_cache_always_equals_a_cold_scan(tmp_path):
    roots = make_roots(tmp_path)
    rng = random.Random(7)
    for step in range(60):
        cache = load_scan_cache(roots)
        warm = roster_json(roots, cache)
        save_scan_cache(roots, cache)
        assert warm == roster_json(roots, ScanCache()), f"step {step}"
        what = mutate_presets(roots, rng)
        cache = load_scan_cache(roots)
        assert roster_json(roots, cache) == roster_json(roots, ScanCache()), f"step {step}: {what}"
        assert cache.parsed <= 2, f"step {step}: {what}: {cache.parsed} files parsed for one change"
        save_scan_cache(roots, cache)


def test_roster_cache_is_really_used_and_racy_entries_are_rehashed(tmp_path):
    roots = make_roots(tmp_path)
    files = sum(1 for r in roots for _ in r.path.rglob("*.yml"))
    cache = load_scan_cache(roots)
    cold = roster_json(roots, cache)
    save_scan_cache(roots, cache)
    assert cache.parsed == files
    young = load_scan_cache(roots)  # saved within 2 s of the writes: stamps not trusted, hashes are
    assert roster_json(roots, young) == cold and (young.parsed, young.hits) == (0, 0)
    assert young.rehashed == files
    time.sleep(2.1)
    save_scan_cache(roots, young)
    settled = load_scan_cache(roots)
    assert roster_json(roots, settled) == cold and (settled.parsed, settled.rehashed) == (0, 0)
    assert settled.hits == files  # old enough: stat alone


def test_damaged_roster_cache_is_rebuilt(tmp_path):
    roots = make_roots(tmp_path)
    cache = load_scan_cache(roots)
    cold = roster_json(roots, cache)
    save_scan_cache(roots, cache)
    [entry] = [p for p in (Path(os.environ["XDG_CACHE_HOME"]) / "dshctl" / "presets").rglob("*")
               if p.is_file() and tmp_path.name in _roots_of(p)]
    for damage in (b"", entry.read_bytes()[:40], diskcache.seal(b"\x00not marshal"), diskcache.seal(b"")):
        entry.write_bytes(damage)
        rebuilt = load_scan_cache(roots)
        assert rebuilt.parsed == 0 and len(rebuilt) == 0
        assert roster_json(roots, rebuilt) == cold


def _roots_of(entry: Path) -> str:
    import marshal

    payload = diskcache.unseal(entry.read_bytes())
    return json.dumps(marshal.loads(payload)[0]) if payload else ""


def test_cli_preset_list_cached_equals_no_cache(capsys, tmp_path):
    make_roots(tmp_path)
    args = ["preset", "list", "--home", tmp_path / "home", "--no-user-root", "-f", "json",
            "--root", tmp_path / "r0", "--root", tmp_path / "r1"]
    outs = [run_main(capsys, "--no-cache", *args), run_main(capsys, *args), run_main(capsys, *args)]
    assert outs[0] == outs[1] == outs[2] and outs[0][0] == 0


def test_cli_preset_list_rendering_always_equals_a_run_without_cache(capsys, tmp_path, monkeypatch):
    """`preset list -f json` reuses its last text while the roster's fingerprint is unchanged
    (core/presets/rendering.py): after every random edit, rename, touch, truncation, deletion,
    addition, same-size rewrite, metadata change, empty preset directory or FIFO, the output equals a run with no cache at
    all, and a second run with nothing changed really reuses the text."""
    from dshctl.cli import preset_list_run

    roots = make_roots(tmp_path)
    args = ["preset", "list", "--home", tmp_path / "home", "--no-user-root", "-f", "json",
            "--root", tmp_path / "r0", "--root", tmp_path / "r1"]
    rendered = []
    real = preset_list_run.json_text
    monkeypatch.setattr(preset_list_run, "json_text", lambda roster: rendered.append(1) or real(roster))
    rng = random.Random(11)
    reused = 0
    for step in range(50):
        fifos = [p for r in roots for p in r.path.glob("*/agent.cordis.yml") if p.is_fifo()]
        if fifos or step % 7 == 0:
            what = _fifo_or_back(roots, rng)
        elif step % 7 == 3:  # a preset directory without files: only the listing shows it
            empty = rng.choice(roots).path / f"e{rng.randrange(3)}"
            what = f"empty dir {empty.name}"
            shutil.rmtree(empty) if empty.exists() else empty.mkdir()
        else:
            what = mutate_presets(roots, rng)
        cold = run_main(capsys, "--no-cache", *args)
        assert run_main(capsys, *args) == cold, f"step {step}: {what}"
        before = len(rendered)
        assert run_main(capsys, *args) == cold, f"step {step}: {what} (second run)"
        fifo = any(p.is_fifo() for r in roots for p in r.path.glob("*/*"))
        reused += len(rendered) == before
        assert (len(rendered) == before) == (not fifo), f"step {step}: {what}: rendering not reused"
    assert reused >= 30


def _fifo_or_back(roots, rng: random.Random) -> str:
    """A composition that is a FIFO (never read, never cached: the rendering must not be reused),
    or a FIFO turned back into a file."""
    fifos = [p for r in roots for p in r.path.glob("*/agent.cordis.yml") if p.is_fifo()]
    if fifos:
        fifos[0].unlink()
        fifos[0].write_text(rng.choice(EDITS))
        return f"fifo back {fifos[0].parent.name}"
    comps = sorted(p for r in roots for p in r.path.glob("*/agent.cordis.yml"))
    target = rng.choice(comps)
    target.unlink()
    os.mkfifo(target)
    return f"fifo {target.parent.name}"


def test_disk_cache_stays_within_its_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = diskcache.DiskCache("t", max_bytes=10_000)
    for i in range(50):
        store.put(diskcache.key_digest(str(i)), b"x" * 1000)
    store.prune()
    sizes = [p.stat().st_size for p in (tmp_path / "cache" / "dshctl" / "t").rglob("*") if p.is_file()]
    assert sum(sizes) <= 10_000 and len(sizes) >= 5
    assert store.get(diskcache.key_digest("49")) == b"x" * 1000  # the newest survive


def test_cache_entries_are_keyed_on_the_code_that_wrote_them(tmp_path, monkeypatch):
    # An upgrade or an edited checkout must never read entries another dshctl wrote (a stale dump or
    # lint result after the emitter changed): the key carries a stamp of dshctl's own source files.
    diskcache.code_version.cache_clear()
    before = diskcache.code_version()
    source = Path(diskcache.__file__)
    st = source.stat()
    try:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        diskcache.code_version.cache_clear()
        assert diskcache.code_version() != before
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
        diskcache.code_version.cache_clear()
    assert diskcache.code_version() == before


def test_cache_entries_skip_fsync_and_a_torn_entry_is_a_miss(tmp_path, monkeypatch):
    """Entries are sealed, so they are written without fsync (a lint run writing 200 entries paid two
    fsyncs each); what a crash could leave — any prefix of the entry — reads as a miss."""
    import os

    from dshctl.core import fsutil
    from dshctl.core.cache import disk

    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    fsutil.atomic_write(tmp_path / "durable", b"x")
    assert len(synced) == 2  # the file and its directory
    synced.clear()
    sealed = disk.seal(b"payload " * 20)
    fsutil.atomic_write(tmp_path / "entry", sealed, durable=False)
    assert synced == [] and (tmp_path / "entry").read_bytes() == sealed
    assert disk.unseal(sealed) == b"payload " * 20
    assert all(disk.unseal(sealed[:n]) is None for n in range(len(sealed)))


def test_read_regular_reads_files_and_nothing_else(tmp_path):
    read_regular = diskcache.read_regular
    (tmp_path / "f").write_bytes(b"x" * 1000)
    assert read_regular(str(tmp_path / "f"), 1000) == b"x" * 1000
    assert read_regular(str(tmp_path / "f"), 999) is None            # over the size limit
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(str(tmp_path / "empty"), 10) == b""
    os.mkfifo(tmp_path / "fifo")                                     # no writer: must not block
    assert read_regular(str(tmp_path / "fifo"), 10) is None
    assert read_regular(str(tmp_path), 10) is None
    assert read_regular(str(tmp_path / "missing"), 10) is None


def test_read_regular_reads_a_file_that_grows_while_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "growing"
    path.write_bytes(b"a" * 100)
    real_read = os.read
    grown = []

    def read_then_grow(fd, n):          # the file grows between the fstat and the first read
        if not grown:
            grown.append(1)
            with open(path, "ab") as fh:
                fh.write(b"b" * 70_000)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", read_then_grow)
    assert diskcache.read_regular(str(path), 1 << 20) == b"a" * 100 + b"b" * 70_000
    assert diskcache.read_regular(str(path), 50_000) is None          # now over the limit
