"""Properties of `dshctl lsp`'s text handling (hypothesis): UTF-16 columns round-trip, and no text or
cursor position makes hover, completion, definition or code actions raise (the buffer is often broken
while someone types). The protocol itself is tested in tests/editors/test_lsp_*.py."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from demo_home import copy_demo_home
from dshctl.lsp import complete, hover, navigate
from dshctl.lsp.diagnostics import publishable
from dshctl.lsp.positions import from_utf16_column, lines_of, to_utf16_column

PIECES = st.sampled_from(["- ", "id: ", "name: ", "disabled: ", "insert:", "config:", "  ", "    ", "\n", "\n",
                          '"yes"', "true", "'a:b'", "{id: x, name: y}", "[", "]", "#", " # dshctl: disable-line=schema",
                          "!!js process.env.X", "echo-lower", "😀", "é", ":", "agent-presets:", "default: "])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


@given(st.text(max_size=30), st.integers(min_value=0, max_value=40))
def test_utf16_columns_round_trip(line, column):
    column = min(column, len(line))
    units = to_utf16_column(line, column)
    assert units == len(line[:column].encode("utf-16-le", "surrogatepass")) // 2
    assert from_utf16_column(line, units) == column


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(text=TEXTS, where=st.tuples(st.integers(0, 12), st.integers(0, 40)),
       name=st.sampled_from(["profiles/web/cordis.patch.yml", "cordis.yml", "settings.yaml", "p/preset.yml",
                             "profiles/web/package.json"]))
def test_no_buffer_or_position_makes_a_feature_raise(tmp_path_factory, text, where, name):
    home = HOME.get("home")
    if home is None:
        home = HOME["home"] = copy_demo_home(tmp_path_factory.mktemp("lsp") / "home")
    path = home / name
    lines = lines_of(text)
    line = min(where[0], len(lines) - 1)
    column = min(where[1], len(lines[line]))
    found = publishable(path, text)
    assert all(d["range"]["start"]["character"] <= d["range"]["end"]["character"] for d in found)
    hover.hover(path, text, lines, line, column, found)
    complete.complete(path, text, lines, line, column)
    navigate.definition(path, text, lines, line, column)
    navigate.code_actions(path.as_uri(), lines, found, yaml=not name.endswith(".json"))


HOME: dict[str, Path] = {}
