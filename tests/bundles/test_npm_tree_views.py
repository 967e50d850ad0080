"""`plugin why` through npm dependencies, `plugin list --depth`, and what `remove` says it removed,
against a real registry on 127.0.0.1 and the lock's requiredBy records (issue #29)."""
from __future__ import annotations

import json

import pytest

from .conftest import cli, npm_bundle


@pytest.fixture
def web(home, repos, npm_env, capsys):
    src = npm_bundle(repos, "dsh-npm", {"@scope/esm": "^1.0.0", "lib-c": "^1.0.0"})
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "add", src.url)
    assert code == 0, err
    lock = json.loads((home / "profiles/web/dshctl.lock.json").read_text())
    return lock["packages"]["dsh-npm"]["npm"]


def _version(npm: dict, name: str) -> str:
    return next(e["version"] for e in npm.values() if e["name"] == name)


def test_why_prints_the_chain_from_the_bundle_down_to_a_transitive_package(home, web, capsys):
    code, out, err = cli(capsys, "plugin", "--profile", "web", "why", "lib-a")
    assert code == 0, err
    esm, lib_a = _version(web, "@scope/esm"), _version(web, "lib-a")
    assert out.startswith("Legend: production dependency, optional only, dev only\n\n"
                          f"web {home / 'profiles/web'}\n\ndependencies:\n")
    tree = out.split("dependencies:\n", 1)[1]
    assert tree.startswith(f"dsh-npm 1.0.0\n└─┬ @scope/esm {esm}\n  └── lib-a {lib_a}\n")
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "why", "lib-a", "--format", "json")
    data = json.loads(out)
    assert data["npm"][0]["name"] == "dsh-npm"
    assert data["npm"][0]["dependencies"][0]["name"] == "@scope/esm"
    assert data["npm"][0]["dependencies"][0]["dependencies"][0]["name"] == "lib-a"
    assert f"npm dependency of dsh-npm: dsh-npm@1.0.0 > @scope/esm@{esm} > lib-a@{lib_a}" \
        in data["reasons"]


def test_why_a_direct_npm_dependency_and_an_unknown_name(home, web, capsys):
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "why", "lib-c")
    assert code == 0 and f"dsh-npm 1.0.0\n└── lib-c {_version(web, 'lib-c')}\n" in out
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "why", "no-such-package")
    assert code == 1 and "no-such-package is not part of profile web" in err


def test_list_depth_nests_npm_dependencies_below_each_bundle(home, web, capsys):
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "list")
    assert code == 0 and "lib-c" not in out  # depth 0: the table as before
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "list", "--depth", "1")
    assert code == 0
    esm, lib_c = _version(web, "@scope/esm"), _version(web, "lib-c")
    assert f"dsh-npm 1.0.0\n├── @scope/esm {esm}\n└── lib-c {lib_c}\n" in out
    assert "dependencies:\n@dshctl/host-base (template)\ndsh-npm 1.0.0\n" in out  # layer order
    assert "lib-a" not in out  # two levels down
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "list", "--depth", "2")
    assert f"├─┬ @scope/esm {esm}\n│ └── lib-a {_version(web, 'lib-a')}\n" in out
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "list", "--depth", "2",
                       "--format", "json")
    row = next(p for p in json.loads(out)["packages"] if p["name"] == "dsh-npm")
    assert [d["name"] for d in row["dependencies"]] == ["@scope/esm", "lib-c"]
    assert row["dependencies"][0]["dependencies"][0]["name"] == "lib-a"
    code, _out, err = cli(capsys, "plugin", "--profile", "web", "list", "--depth", "-1")
    assert code == 2 and "Traceback" not in err


def test_remove_says_how_many_npm_packages_went_with_the_bundle(home, web, capsys):
    code, out, err = cli(capsys, "plugin", "--profile", "web", "remove", "dsh-npm")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("dsh-npm"))
    assert f"removed with its {len(web)} npm packages" in line and " 0 " not in line
    code, out, _ = cli(capsys, "plugin", "--profile", "web", "list", "--format", "json")
    assert "dsh-npm" not in out
