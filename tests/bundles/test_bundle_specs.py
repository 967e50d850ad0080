"""SPEC parsing: every accepted form, the pinned form, and refusal of dangerous input."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshctl.bundles.specs import parse_spec
from dshctl.errors import DshctlError

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("raw,url,ref", [
    ("https://github.com/o/r", "https://github.com/o/r", None),
    ("https://github.com/o/r.git#v1.2.0", "https://github.com/o/r.git", "v1.2.0"),
    ("git+https://host.example/o/r.git#main", "https://host.example/o/r.git", "main"),
    ("git+ssh://git@host.example/o/r.git#" + SHA, "ssh://git@host.example/o/r.git", SHA),
    ("ssh://git@host.example:2222/o/r", "ssh://git@host.example:2222/o/r", None),
    ("git@github.com:o/r.git#feature/x", "git@github.com:o/r.git", "feature/x"),
    ("github:o/r#v2", "https://github.com/o/r.git", "v2"),
    ("git://127.0.0.1:9418/r.git", "git://127.0.0.1:9418/r.git", None),
    ("file:///srv/git/r.git#dev", "file:///srv/git/r.git", "dev"),
])
def test_accepted_forms(raw, url, ref):
    spec = parse_spec(raw)
    assert (spec.url, spec.ref) == (url, ref)


def test_local_paths_are_anchored_at_the_invoking_directory(tmp_path):
    spec = parse_spec("./sub/repo#v1", cwd=tmp_path)
    assert spec.url == (tmp_path / "sub" / "repo").as_uri() and spec.ref == "v1"
    assert parse_spec("..", cwd=tmp_path / "a").url == tmp_path.as_uri()


@pytest.mark.parametrize("raw,recorded", [
    # as typed, as pnpm records them (the pins live in the lock files)
    ("git://127.0.0.1/dsh-a.git#main", "git://127.0.0.1/dsh-a.git#main"),
    ("git+file:///srv/r.git#v1.2.0", "git+file:///srv/r.git#v1.2.0"),
    ("git://h/r.git#semver:^1.0.0", "git://h/r.git#semver:^1.0.0"),
    ("github:o/r#v1", "github:o/r#v1"),
    ("git@github.com:o/r.git", "git@github.com:o/r.git"),
    ("git+ssh://git@h/o/r#x", "git+ssh://git@h/o/r#x"),
    ("https://h/o/r.git#" + SHA, "https://h/o/r.git#" + SHA),
    # forms pnpm would read as something else get npm's explicit git form
    ("https://github.com/o/r", "git+https://github.com/o/r"),
    ("file:///srv/r.git#dev", "git+file:///srv/r.git#dev"),
    ("/srv/r.git", "git+file:///srv/r.git"),
])
def test_manifest_forms_recorded_in_dependencies(raw, recorded):
    assert parse_spec(raw).manifest_spec() == recorded


def test_semver_ranges_over_tags_parse_and_bad_ranges_are_refused():
    assert parse_spec("git://h/r.git#semver:^1.0.0").semver == "^1.0.0"
    with pytest.raises(DshctlError, match="not a valid npm version range"):
        parse_spec("git://h/r.git#semver:one!")


@pytest.mark.parametrize("raw", [
    "ext::sh -c touch% /tmp/pwned", "git+ext::sh", "fd::3", "transport::whatever",
    "-uhttps://x/o/r", "--upload-pack=touch /tmp/x", "git+-x://y",
    "https://github.com/o/r#-b", "https://github.com/o/r#--upload-pack=x",
    "https://github.com/o/r#a..b", "https://h/o/r#semver:^^1", "ftp://h/o/r", "javascript:alert(1)",
    "https://h/o/r#ref with space", "plainname", "", "https://h", "file://-x",
])
def test_dangerous_or_unknown_specs_are_refused(raw):
    with pytest.raises(DshctlError) as err:
        parse_spec(raw)
    assert err.value.hint  # every refusal says what to use instead


@given(st.text(max_size=40))
def test_any_accepted_spec_is_safe_for_git(raw):
    try:
        spec = parse_spec(raw, cwd="/tmp")
    except DshctlError:
        return
    assert not spec.url.startswith("-") and "::" not in spec.url.split("://")[0]
    assert spec.url.split("://")[0] in ("https", "http", "ssh", "git", "file") or "@" in spec.url
    assert spec.ref is None or not spec.ref.startswith("-")


@pytest.mark.parametrize("raw", ["ext::sh -c touch% /tmp/pwned", "git+ext::sh", "fd::3"])
def test_transport_helpers_are_named_as_such(raw):
    with pytest.raises(DshctlError, match="transport helpers"):
        parse_spec(raw)


@pytest.mark.parametrize("raw", [
    "git@-oProxyCommand:x", "ssh://h:-oProxyCommand=x/r", "ssh://-u@h/r", "git+ssh://u@-h/r",
    "git@host:-x",
])
def test_option_like_user_host_or_port_is_refused_before_git_runs(raw):
    with pytest.raises(DshctlError, match="starts with '-'|not a git URL"):
        parse_spec(raw)
