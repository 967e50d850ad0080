"""The pure parts of the sandbox: the complement of hidden paths (Landlock's grants), the environment
allow-list, the mode fold and dsh's texts."""
from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, strategies as st

from dshctl.agents.sandbox.env import confined_env
from dshctl.agents.sandbox.hidden import is_within, readable_subtrees
from dshctl.agents.sandbox.policy import (SandboxPolicy, check_widening, denial_marker, fold_sandbox_mode,
                                          policy_context, validate_escalation_args)

names = st.sampled_from(["a", "b", "c", "dd"])
paths = st.lists(names, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


@given(tree=st.sets(paths, min_size=1, max_size=25), data=st.data())
def test_the_grants_cover_every_visible_path_and_no_hidden_one(tree, data):
    # close the tree under parents: a path's ancestors are directories
    full = set(tree)
    for p in tree:
        while p != "/":
            p = posixpath.dirname(p)
            full.add(p)
    dirs = {posixpath.dirname(p) for p in full if p != "/"}
    hidden = data.draw(st.lists(st.sampled_from(sorted(full - {"/"})), max_size=3))

    def list_dir(path):
        return [(posixpath.basename(p), p in dirs) for p in full
                if p != "/" and posixpath.dirname(p) == path]
    grants = readable_subtrees("/", hidden, list_dir)
    for p in full:
        covered = any(is_within(p, g) for g in grants)
        if any(is_within(p, h) for h in hidden):
            assert not covered, (p, grants)
        elif not any(is_within(h, p) for h in hidden):      # not an ancestor of a hidden path
            assert covered, (p, grants)
    for g in grants:                                        # no grant holds a hidden path
        assert not any(is_within(h, g) for h in hidden)


def test_the_environment_is_an_allow_list():
    host = {"PATH": "/secret/bin:/usr/bin", "LANG": "de_DE.UTF-8", "OPENAI_API_KEY": "k", "NPM_TOKEN": "t",
            "AWS_SECRET_ACCESS_KEY": "s"}
    env = confined_env("/tmp/x", base=host, pass_env=["NPM_TOKEN"], hidden=["/secret"])
    assert env == {"PATH": "/usr/bin", "LANG": "de_DE.UTF-8", "HOME": "/tmp/x", "TMPDIR": "/tmp/x",
                   "NPM_TOKEN": "t"}


def test_the_last_sandbox_mode_event_wins():
    events = [{"type": "sandbox/mode", "data": {"mode": "read-only"}}, {"type": "user/message", "data": {}},
              {"type": "sandbox/mode", "data": {"mode": "danger-full-access"}}]
    assert fold_sandbox_mode(events) == "danger-full-access"
    assert fold_sandbox_mode(events[1:2]) is None


def test_dshs_texts(tmp_path):
    policy = SandboxPolicy("workspace-write", str(tmp_path))
    assert policy_context(policy).endswith(f'session workspace: "{tmp_path}". Some platform temporary areas '
                                           "may also be writable.")
    assert denial_marker("read-only") == "[sandbox: file access denied under read-only mode]"
    with pytest.raises(ValueError, match="requires a justification"):
        validate_escalation_args("danger-full-access", None)
    with pytest.raises(ValueError, match="not strictly wider"):
        check_widening("read-only", "workspace-write")
    check_widening("danger-full-access", "workspace-write")
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        SandboxPolicy("everything", "/")
