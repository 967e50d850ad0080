"""`dshctl profile dump` against the real dsh's `--dump-config`, `--dump-default-config` and `--patch`.

Every home here is read by both programs (tests/dsh/dump_homes.py): the demo home with dshctl's base
bundle installed into its profile, every home of the shared corpus, a profile per corpus bundle over
dsh's own web bundles, every corpus YAML file as a `--patch`, and homes that fail in each way dsh
fails. stdout must be equal byte for byte; warnings and error messages are compared by text after the
documented normalisation of tests/dsh/dump_compare.py (docs/compose.md, "The real dsh beside dshctl").

Speed: one dsh start costs about a second, so the dumps run through dsh's own dump entry in a single
Node process (dump_driver.mts); test_the_driver_is_the_cli checks that against real `dsh` runs.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dshctl.core.compose.profile import SHIPPED_BUNDLES
from . import dump_homes
from .dump_compare import Outcome, dsh_batch, dsh_cli_error, dshctl_batch, dshctl_env, dshctl_run
from .dump_homes import Invocation

RESOLVE = re.compile(r"^cannot resolve profile bundle (?P<name>\"[^\"]+\") from the dsh installation or "
                     r"(?P<dir>\S+); run 'dsh plugin --profile (?P<profile>\S+) install' if its dependency "
                     r"is not installed$")


class Matrix:
    """Every invocation, run by both tools once per module; looked up by key."""

    def __init__(self, invocations: list[Invocation], dsh: list[Outcome], dshctl: list[Outcome]):
        self.rows = {inv.key: (inv, a, b) for inv, a, b in zip(invocations, dsh, dshctl, strict=True)}

    def keys(self, prefix: str) -> list[str]:
        return [key for key in self.rows if key.startswith(prefix)]

    def dsh(self, key: str) -> Outcome:
        return self.rows[key][1]

    def dshctl(self, key: str) -> Outcome:
        return self.rows[key][2]


def expected_error(message: str) -> str:
    """dsh's message as dshctl words it: the commands it names are dshctl's; bundle resolution names
    dshctl's bundle roots where dsh names its installation (its install advice moves to the hint)."""
    match = RESOLVE.match(message)
    if match:
        return (f"cannot resolve profile bundle {match['name']} from the dshctl bundle roots "
                f"({SHIPPED_BUNDLES}) or {match['dir']}")
    return message.replace("'dsh plugin ", "'dshctl plugin ")


def assert_same(matrix: Matrix, key: str) -> None:
    inv, dsh, ctl = matrix.rows[key]
    where = f"{key}: dsh {' '.join(inv.dsh_argv())} (DSH_HOME={inv.home})"
    assert ctl.stdout == dsh.stdout, f"{where}: stdout differs"
    assert ctl.warnings == dsh.warnings, f"{where}: warnings differ"
    if dsh.ok:
        assert ctl.ok, f"{where}: dsh dumped, dshctl failed: {ctl.error}"
    else:
        assert not ctl.ok, f"{where}: dsh failed ({dsh.error}), dshctl dumped"
        assert ctl.error == expected_error(dsh.error), where


def _invocations(real_dsh, root: Path) -> list[Invocation]:
    out: list[Invocation] = []

    def both(key, home, profile, cwd=root, **kw):
        out.append(Invocation(key, home, profile, cwd, **kw))
        if not kw.get("patches"):
            out.append(Invocation(key + "#default", home, profile, cwd, default_only=True))

    demo = dump_homes.demo_home(root / "demo")
    warn = root / "warnings.yml"
    warn.write_text(dump_homes.WARNING_PATCH)
    both("demo", demo, "web")
    both("demo+warnings", demo, "web", patches=[str(warn)])
    both("demo+relative", demo, "web", cwd=root, patches=["warnings.yml"])
    both("demo+twice", demo, "web", patches=[str(warn), str(warn)])
    layered = dump_homes.demo_home(root / "demo-layered")
    with open(layered / "profiles" / "web" / "cordis.patch.yml", "a") as fh:
        fh.write("- id: no-row-from-the-profile-layer\n  disabled: true\n")
    with open(layered / "cordis.patch.yml", "a") as fh:
        fh.write("- id: greeter\n  name: wrong-name\n  config: {}\n")
    both("demo-layered", layered, "web")
    (root / "empty.yml").write_text("")
    (root / "comments.yml").write_text("# nothing\n")
    (root / "scalar.yml").write_text("42\n")
    (root / "entry.yml").write_text("- id: timer\n- [a]\n")
    (root / "broken.yml").write_text("- id: timer\n  config: {interval: 5\n")
    (root / "a-directory.yml").mkdir()
    for name in ("empty", "comments", "scalar", "entry", "broken", "a-directory", "missing"):
        both(f"demo+{name}", demo, "web", patches=[str(root / f"{name}.yml")])
    both("demo+missing-relative", demo, "web", patches=["missing.yml"])

    for home, profile in dump_homes.corpus_profile_homes(root / "corpus", real_dsh.source):
        both(f"home:{home.name}", home, profile)
    bundles, profiles = dump_homes.corpus_bundle_home(root, real_dsh.source)
    for profile, name in profiles:
        both(f"bundle:{name}", bundles, profile)

    patches = root / "patch-home"
    patches.mkdir()
    for number, file in enumerate([*dump_homes.corpus_patch_files(), real_dsh.no_typert_patch]):
        out.append(Invocation(f"patch:{number}:{file}", patches, "web", root, patches=[str(file)]))

    errors = dump_homes.error_home(root)
    for profile in [*dump_homes.ERROR_PROFILES, "not-a-profile"]:
        both(f"error:{profile}", errors, profile)
    both("error:broken-home-layer", dump_homes.broken_home_layer_home(root), "web")
    manifests = dump_homes.manifest_home(root)
    for profile in dump_homes.MANIFEST_CASES:
        out.append(Invocation(f"manifest:{profile}", manifests, profile, root))
    return out


@pytest.fixture(scope="module")
def matrix(real_dsh, tmp_path_factory) -> Matrix:
    root = tmp_path_factory.mktemp("dump-vs-dsh")
    invocations = _invocations(real_dsh, root)
    dsh = dsh_batch(real_dsh, invocations, root)  # first: dsh links its in-box bundles into each home
    # Every corpus patch file dsh accepts, all at once and in argv order (--patch repeats).
    ok = [inv.patches[0] for inv, outcome in zip(invocations, dsh) if inv.key.startswith("patch:") and outcome.ok]
    more = [Invocation("patches:all", root / "patch-home", "web", root, patches=ok),
            Invocation("patches:all-reversed", root / "patch-home", "headless", root, patches=ok[::-1])]
    dsh += dsh_batch(real_dsh, more, root)
    invocations += more
    return Matrix(invocations, dsh, dshctl_batch(invocations, root / "dshctl-cache"))


def test_the_demo_home_dumps_as_dsh_dumps_it(matrix):
    keys = matrix.keys("demo")
    for key in keys:
        assert_same(matrix, key)
    assert matrix.dsh("demo").stdout.startswith("# == @dshctl/host-base")
    assert matrix.dsh("demo").stdout != matrix.dsh("demo#default").stdout  # the user layers count
    assert len(matrix.dsh("demo+twice").warnings) == 2 * len(matrix.dsh("demo+warnings").warnings)
    assert len(matrix.dsh("demo-layered").warnings) == 2
    assert sum(not matrix.dsh(k).ok for k in keys) >= 8  # the broken --patch files fail in dsh too


def test_every_kind_of_patch_warning_matches_dsh_and_dshctl_adds_where(matrix):
    dsh, ctl = matrix.dsh("demo+warnings"), matrix.dshctl("demo+warnings")
    texts = "\n".join(dsh.warnings)
    for words in ("patch: entry \"no-such-row\" not found", "patch: name mismatch for \"greeter\"",
                  "patch insert: entry \"no-such-group\" not found", "patch insert: entry \"timer\" is not a group",
                  "patch: id is required for non-insert patches", "patch: entry 7 not found"):
        assert words in texts
    assert ctl.warnings == dsh.warnings
    # The improvement: each warning of dshctl's names the patch's file:line:col (the prefix is stripped
    # for the comparison, after checking that the line exists in that very file).
    located = re.findall(r"^warning: \[.*\] .* \((/.*):(\d+):(\d+)\)$", ctl.raw_stderr, re.M)
    assert len(located) == len(dsh.warnings)
    assert {int(line) for _, line, _ in located} == {1, 4, 6, 9, 12, 13, 15}  # the name mismatch: at its name
    assert '  hint: did you mean "echo-upper"?' in ctl.raw_stderr


@pytest.mark.parametrize("prefix, at_least", [("home:", 4), ("bundle:", 20), ("patch:", 60), ("patches:", 2)])
def test_the_corpus_dumps_as_dsh_dumps_it(matrix, prefix, at_least):
    keys = [k for k in matrix.keys(prefix) if k not in BOM_KEYS]
    assert len(keys) >= at_least
    for key in keys:
        assert_same(matrix, key)


def test_the_corpus_exercises_warnings_errors_and_js(matrix):
    patch_keys = matrix.keys("patch:")
    assert sum(len(matrix.dsh(k).warnings) for k in patch_keys) >= 30
    assert sum(not matrix.dsh(k).ok for k in patch_keys) >= 4
    assert all("!!js" in matrix.dsh(k).stdout for k in ("patches:all", "home:zhoupen9__deepseek-harness-home__web"))
    assert len(matrix.rows["patches:all"][0].patches) >= 50
    assert matrix.dsh("patches:all").stdout.count("\n") > 1000


def test_errors_carry_dshs_message(matrix):
    keys = matrix.keys("error:")
    for key in keys:
        assert_same(matrix, key)
    failed = {k for k in keys if not matrix.dsh(k).ok}
    # Each profile fails its full dump; the bundle-only dump fails only when a bundle is the problem.
    assert failed >= {f"error:{p}" for p in [*dump_homes.ERROR_PROFILES, "not-a-profile", "broken-home-layer"]}
    assert {"error:broken-user#default", "error:user-not-a-list#default",
            "error:broken-home-layer#default"}.isdisjoint(failed)
    assert "error:missing-bundle#default" in failed
    read = matrix.dshctl("error:bundle-patch-missing").error
    assert read.endswith("cordis.patch.yml: Error: ENOENT: no such file or directory, open '"
                         + read.split("open '")[1])


BOM_KEYS = {k for k in ("bundle:dsh-security-gate", "bundle:dsh-security-gate#default")}


def test_a_manifest_with_a_bom_is_dshctls_documented_difference(matrix, real_dsh, tmp_path):
    """dsh's JSON.parse refuses a package.json that starts with a BOM; dshctl reads it (docs/compose.md)
    and composes what dsh composes once the BOM is gone."""
    for key in BOM_KEYS:
        inv = matrix.rows[key][0]
        assert not matrix.dsh(key).ok and matrix.dsh(key).error.startswith("Unexpected token '\ufeff'")
        assert matrix.dshctl(key).ok
        home = tmp_path / key.replace(":", "_").replace("#", "_")
        shutil.copytree(inv.home, home, symlinks=True)
        manifest = next((home / "profiles" / inv.profile / "node_modules").glob("*/package.json"), None) \
            or next((home / "profiles" / inv.profile / "node_modules").glob("*/*/package.json"))
        manifest.write_text(manifest.read_text(encoding="utf-8-sig"), encoding="utf-8")
        fixed = Invocation(key, home, inv.profile, inv.cwd, default_only=inv.default_only)
        [without_bom] = dsh_batch(real_dsh, [fixed], tmp_path)
        assert without_bom.ok and matrix.dshctl(key).stdout == without_bom.stdout.replace(str(home), str(inv.home))


def test_the_driver_is_the_cli(matrix, real_dsh):
    """dump_driver.mts says what the real `dsh` program says: same stdout, warnings, error line."""
    for key in ("demo+warnings", "home:zhoupen9__deepseek-harness-home__web", "error:broken-user",
                "demo+missing-relative"):
        inv, driven, _ = matrix.rows[key]
        run = real_dsh.run(inv.home, *inv.dsh_argv(), cwd=inv.cwd)
        assert run.stdout == driven.stdout, key
        if driven.ok:
            assert run.returncode == 0 and run.stderr.splitlines() == ["dsh: " + w for w in driven.warnings]
        else:
            assert run.returncode == 1 and dsh_cli_error(run.stderr) == "dsh: " + driven.error


def test_in_process_dshctl_is_the_cli(matrix, tmp_path):
    """The matrix calls dshctl's entry point in-process; `python -m dshctl` processes say the same."""
    keys = ["demo+warnings", "demo-layered", "error:broken-user", "error:missing-bundle",
            "home:zhoupen9__deepseek-harness-home__web", "demo+missing-relative"]
    processes = dshctl_batch([matrix.rows[k][0] for k in keys], tmp_path / "cache", processes=True)
    for key, run in zip(keys, processes, strict=True):
        ours = matrix.dshctl(key)
        assert (run.ok, run.stdout, run.warnings, run.error, run.raw_stderr) == \
            (ours.ok, ours.stdout, ours.warnings, ours.error, ours.raw_stderr), key


def test_a_bundle_only_dump_refuses_a_patch_in_both(matrix, real_dsh, tmp_path):
    inv = matrix.rows["demo+warnings"][0]
    refused = real_dsh.run(inv.home, "--profile", "web", "--dump-default-config", "--patch", inv.patches[0])
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip() == "error: --dump-default-config prints the bundle layers and takes no --patch"
    ours = dshctl_run(Invocation("x", inv.home, "web", inv.cwd, default_only=True, patches=inv.patches),
                      dshctl_env(tmp_path))
    assert ours.returncode == 2 and ours.stdout == ""
    assert ours.stderr.splitlines()[0] == (
        "dshctl: error: " + refused.stderr.strip()[len("error: "):].replace("--dump-default-config", "--default-only"))


def test_dsh_resolves_dshctls_base_bundle_only_once_it_is_installed(real_dsh, tmp_path):
    """Without the copy in the profile, dsh cannot find @dshctl/host-base (dshctl ships it)."""
    from demo_home import copy_demo_home

    home = copy_demo_home(tmp_path / "home")
    [outcome] = dsh_batch(real_dsh, [Invocation("bare", home, "web", tmp_path)], tmp_path)
    assert not outcome.ok and outcome.error.startswith('cannot resolve profile bundle "@dshctl/host-base"')
    [ours] = dshctl_batch([Invocation("bare", home, "web", tmp_path)], tmp_path / "cache")
    assert ours.ok and ours.stdout.startswith("# == @dshctl/host-base")
    assert json.loads((home / "profiles" / "web" / "package.json").read_text())["dsh"]["profile"]["bundles"][0] \
        == "@dshctl/host-base"


def test_manifests_dsh_trips_over_are_dshctl_errors_or_its_documented_empty_dump(matrix):
    """dsh checks only that a profile manifest is an object; past that a wrong shape is a JavaScript
    TypeError (or V8's JSON.parse text). dshctl names the file and the rule (docs/compose.md)."""
    assert_same(matrix, "manifest:manifest-array")
    for key in ("manifest:bundles-a-string", "manifest:bundles-a-number"):
        dsh, ctl = matrix.dsh(key), matrix.dshctl(key)
        assert not dsh.ok and not dsh.error.startswith("dsh: ")  # a TypeError from inside dsh
        manifest = matrix.rows[key][0].home / "profiles" / matrix.rows[key][0].profile / "package.json"
        assert ctl.error == f"dsh.profile.bundles in {manifest} must be a list of package names"
    dsh, ctl = matrix.dsh("manifest:manifest-truncated"), matrix.dshctl("manifest:manifest-truncated")
    assert not dsh.ok and not ctl.ok and dsh.error == "Unexpected end of JSON input"
    assert ctl.error == "unexpected end of JSON input"  # and dshctl's location says where: 1:10
    # No bundles, no layers: dsh prints an empty line, dshctl `[]` (it always loads as a list).
    dsh, ctl = matrix.dsh("manifest:no-dsh-section"), matrix.dshctl("manifest:no-dsh-section")
    assert (dsh.ok, dsh.stdout, ctl.ok, ctl.stdout) == (True, "\n", True, "[]\n")
