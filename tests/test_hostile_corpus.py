"""Hostile-input corpus (issue 14): every class of bad input, in every file a reading command reads,
through every reading command. A command may refuse (exit 1 or 2 with `dshctl: error:` and a hint);
it never ends in exit 3, a traceback or a hang.

Run in process (`main(argv)`, output captured at the file descriptors, so text still has to be
encodable) to keep this to a few seconds; tests/test_hostile_values.py runs the sharpest cases as real
processes.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from dshctl.cli.app import main
from demo_home import copy_demo_home

REPO = Path(__file__).resolve().parents[1]
BIG = "9" * 5000

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8))

# name -> bytes of a YAML layer (None: a special file made by make_special)
YAML_CASES: dict[str, bytes | None] = {
    "huge-int": f"- id: http\n  config: {{port: {BIG}}}\n".encode(),
    "huge-int-tagged": f"- id: http\n  config: {{port: !!int {BIG}}}\n".encode(),
    "js-hex": ("- id: http\n  config: {port: !!js 0x" + "f" * 300 + "}\n").encode(),
    "lone-surrogate": b'- id: http\n  config: {host: "\\ud800"}\n',
    "surrogate-key": b'- id: "\\udcff"\n  disabled: true\n',
    "alias-bomb": BOMB.encode(),
    "deep-nesting": b"- " + b"[" * 100_000 + b"\n",
    "nul-byte": b"- id: http\n  config: {host: a\x00b}\n",
    "bom": b"\xef\xbb\xbf- id: http\n  disabled: false\n",
    "double-bom": b"\xef\xbb\xbf\xef\xbb\xbf- id: http\n",
    "invalid-utf8": b"- id: http\n  config: {host: \xff\xfe}\n",
    "binary": bytes(range(256)) * 4,
    "empty": b"",
    "fifo": None,
    "symlink-loop": None,
    "directory": None,
}
JSON_CASES: dict[str, bytes] = {
    "huge-int": b'{"name": "x", "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}, "n": ' + BIG.encode() + b"}",
    "lone-surrogate": b'{"name": "\\ud800", "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}',
    "deep-nesting": b"[" * 100_000,
    "bom": b'\xef\xbb\xbf{"name": "x", "dsh": {"profile": {"bundles": ["@dshctl/host-base"]}}}',
    "invalid-utf8": b'{"name": "\xff"}',
    "nul-byte": b'{"name": "a\x00"}',
    "not-an-object": b"[1, 2]",
}

READERS = [["lint", "{target}"], ["lint", "{profile_dir}"], ["profile", "dump"], ["profile", "dump", "-f", "json"],
           ["profile", "explain", "http"], ["profile", "list"], ["preset", "list"], ["plugin", "list"],
           ["profile", "set", "http.config.port", "5"]]


def make_special(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-loop":
        other = path.with_name(path.name + ".loop")
        os.symlink(other, path)
        os.symlink(path, other)
    elif kind == "directory":
        path.mkdir()


def remove(path: Path) -> None:
    """Undo write_bytes or make_special."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
    path.with_name(path.name + ".loop").unlink(missing_ok=True)


def run(capfd, argv: list[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capfd.readouterr()
    return exit_info.value.code, out, err


# Files every command reads (the profile layer, the manifest) go through every reader; files fewer
# commands read through the two that read them all (time: the corpus stays at a few hundred runs).
SHORT_READERS = [["lint", "{target}"], ["profile", "dump", "-f", "json"]]
MANIFEST_READERS = [["lint", "{target}"], ["profile", "dump"], ["profile", "list"], ["preset", "list"],
                    ["plugin", "list"], ["profile", "set", "http.config.port", "5"]]


def check_all_readers(capfd, home: Path, target: Path, what: str, readers=READERS) -> None:
    profile_dir = home / "profiles" / "web"
    for reader in readers:
        argv = ["--home", str(home)] + [a.format(target=target, profile_dir=profile_dir) for a in reader]
        code, out, err = run(capfd, argv)
        assert code in (0, 1, 2), (what, reader, code, err)
        assert "Traceback" not in err and "internal error" not in err, (what, reader, err)
        if code and not (reader[0] == "lint" and " error(s)" in err + out):   # lint: findings, located
            lines = err.splitlines()
            assert any(line.startswith("dshctl: error: ") for line in lines), (what, reader, err)


@pytest.fixture
def home(tmp_path) -> Path:
    target = tmp_path / "home"
    copy_demo_home(target)
    return target


@pytest.mark.parametrize("layer", ["profile", "home"])
def test_every_yaml_class_in_a_user_layer(capfd, home, layer):
    target = (home / "profiles" / "web" if layer == "profile" else home) / "cordis.patch.yml"
    original = target.read_bytes()
    for name, data in YAML_CASES.items():
        if data is None:
            make_special(target, name)
        else:
            target.write_bytes(data)
        check_all_readers(capfd, home, target, f"{layer} layer: {name}",
                          READERS if layer == "profile" else SHORT_READERS)
        remove(target)
        target.write_bytes(original)


def test_every_json_class_in_the_profile_manifest(capfd, home):
    target = home / "profiles" / "web" / "package.json"
    original = target.read_bytes()
    for name, data in JSON_CASES.items():
        target.write_bytes(data)
        check_all_readers(capfd, home, target, f"package.json: {name}", MANIFEST_READERS)
    for kind in ("fifo", "symlink-loop", "directory"):
        make_special(target, kind)
        check_all_readers(capfd, home, target, f"package.json: {kind}", MANIFEST_READERS)
        remove(target)
    target.write_bytes(original)


def test_every_yaml_class_in_a_bundle_layer(capfd, home):
    target = home / "profiles" / "web" / "node_modules" / "@demo" / "greeter" / "cordis.patch.yml"
    for name, data in YAML_CASES.items():
        if data is None:
            make_special(target, name)
        else:
            target.write_bytes(data)
        check_all_readers(capfd, home, target, f"bundle layer: {name}", SHORT_READERS)
        remove(target)
