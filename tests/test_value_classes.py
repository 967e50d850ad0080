"""The plain value classes on the start-up path (Loc, Diagnostic, State, lint's options and config)
behave as the dataclasses they replaced: the same repr, equality, hash, dict and copies, checked
against real dataclasses declared here with the same fields."""
from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshctl.cli.shared import State
from dshctl.core.diagnostics import Diagnostic
from dshctl.errors import Loc
from dshctl.lint.config import LintConfig, Override, RulePolicy
from dshctl.lint.plan import LintOptions, LintResult


@dataclasses.dataclass(unsafe_hash=True)
class RefLoc:
    file: str
    line: int = 0
    column: int = 0


@dataclasses.dataclass(frozen=True)
class RefDiagnostic:
    file: str
    line: int
    column: int
    rule: str
    severity: str
    message: str
    hint: Optional[str] = None
    json_path: str = "$"


def _same_shape(ours, ref) -> None:
    assert repr(ours) == repr(ref).replace("Ref", "", 1)
    assert hash(ours) == hash(dataclasses.astuple(ref))


text = st.text(max_size=12)
number = st.integers(-5, 10**6)


@given(text, number, number)
def test_loc_is_the_dataclass_it_was(file, line, column):
    ours, ref = Loc(file, line, column), RefLoc(file, line, column)
    _same_shape(ours, ref)
    assert ours == Loc(file, line, column) and ours != Loc(file + "x", line, column)
    assert ours != (file, line, column) and Loc(file) == Loc(file, 0, 0)
    assert pickle.loads(pickle.dumps(ours)) == ours


@given(text, number, number, text, st.sampled_from(["error", "warning", "info"]), text,
       st.none() | text, text)
def test_diagnostic_is_the_frozen_dataclass_it_was(file, line, column, rule, severity, message, hint,
                                                    json_path):
    args = (file, line, column, rule, severity, message, hint, json_path)
    ours, ref = Diagnostic(*args), RefDiagnostic(*args)
    _same_shape(ours, ref)
    assert ours.to_dict() == dataclasses.asdict(ref)
    assert list(ours.to_dict()) == [f.name for f in dataclasses.fields(RefDiagnostic)]
    assert ours.replace(severity="info") == Diagnostic(*args[:4], "info", *args[5:])
    assert ours.replace(severity="info").to_dict() == dataclasses.asdict(
        dataclasses.replace(ref, severity="info"))
    assert pickle.loads(pickle.dumps(ours)) == ours and Diagnostic(**ours.to_dict()) == ours
    assert len({ours, Diagnostic(*args)}) == 1
    with pytest.raises(AttributeError):
        ours.severity = "error"  # type: ignore[misc]


def test_the_other_records_compare_and_show_by_their_fields():
    assert State(Path("/h"), "web") == State(Path("/h"), "web", False) != State(Path("/h"), "web", True)
    assert repr(State(Path("/h"), "web")) == "State(home=PosixPath('/h'), profile='web', debug=False)"
    with pytest.raises(TypeError):
        hash(State(Path("/h"), "web"))  # mutable, like the dataclass it was
    assert LintOptions() == LintOptions(None, None, frozenset(), None)
    assert hash(LintOptions(select=frozenset({"a"}))) == hash(LintOptions(select=frozenset({"a"})))
    assert LintOptions(kind="preset") != LintOptions()
    assert repr(LintOptions()) == "LintOptions(config=None, select=None, ignore=frozenset(), kind=None)"
    assert LintConfig() == LintConfig(None, {}, ()) and LintConfig().rules is not LintConfig().rules
    over = Override(Path("/x"), ("*.yml",), {"schema": "off"})
    assert over == Override(Path("/x"), ("*.yml",), {"schema": "off"}) != Override(Path("/y"), (), {})
    assert RulePolicy({"a": "off"}) == RulePolicy({"a": "off"}) != RulePolicy({})
    result = LintResult([], 0)
    assert result.skipped == [] and result.skipped is not LintResult([], 0).skipped
    result.files = 3  # a result is filled in as the run goes
    assert result == LintResult([], 3)
