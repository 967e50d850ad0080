"""A file's kind by its name: the one-star matchers agree with fnmatch on every name (a property
test over names built from the patterns' own pieces), first pattern wins, and a pattern the
matchers cannot express is refused rather than matched wrongly."""
from __future__ import annotations

import fnmatch
from pathlib import PurePath

import pytest
from hypothesis import given, settings, strategies as st

from dshctl.core.yaml import filekinds as fk

PIECES = ["cordis", "patch", "overlay", "agent", "work", "preset", "package", "json", "yml", "yaml",
          ".", "..", "-", "x", "*", "Cordis", "YML", " "]


def by_fnmatch(name: str) -> str | None:
    return next((kind for pattern, kind in fk._NAME_PATTERNS if fnmatch.fnmatchcase(name, pattern)), None)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=7).map("".join))
def test_the_matchers_agree_with_fnmatch(name):
    assert fk.kind_of(name) == by_fnmatch(name)


def test_a_path_is_judged_by_its_last_component():
    assert fk.kind_of(PurePath("profiles/web/cordis.patch.yml")) == fk.PATCH_LIST
    assert fk.kind_of("cordis.yml/notes.txt") is None


@pytest.mark.parametrize("name, kind", [
    ("cordis.patch.yml", fk.PATCH_LIST), ("cordis.patch.local.yaml", fk.PATCH_LIST),
    ("cordis.patch..yml", fk.PATCH_LIST),            # fnmatch's '*' matches nothing too
    ("work.cordis.patch.yml", fk.PATCH_LIST),         # before *.cordis.yml
    ("base.overlay.yaml", fk.PATCH_LIST), ("agent.cordis.yml", fk.ENTRY_LIST),
    (".cordis.yml", fk.ENTRY_LIST), ("cordis.yaml", fk.ENTRY_LIST), ("preset.yml", fk.PRESET),
    ("package.json", fk.PACKAGE_JSON), ("Cordis.yml", None), ("cordis.yml.bak", None),
    ("xcordis.yml", None), ("settings.yaml", None),    # settings: only in a dsh home (lint/plan.py)
])
def test_names_users_write(name, kind):
    assert fk.kind_of(name) == kind


@pytest.mark.parametrize("pattern", ["*.cordis.*.yml", "cordis.?.yml", "cordis.[ab].yml"])
def test_a_pattern_beyond_one_star_is_refused(pattern):
    with pytest.raises(ValueError, match="one '\\*' at most"):
        fk._matcher(pattern)
