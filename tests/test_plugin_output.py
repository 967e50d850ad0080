"""`dshctl plugin`'s plain table is byte-identical to what rich prints on a piped console (less the
trailing spaces, which cli.shared.print_table drops from rich's lines too)."""
from __future__ import annotations

import io
import string

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table

from dshctl.cli import plain_table
from dshctl.cli.plugin_output import PLAIN_WIDTH
from dshctl.cli.shared import without_trailing_spaces


def rich_text(columns, rows, width=PLAIN_WIDTH) -> str:
    """cli.common.console() when stdout is not a terminal, printing the table plugin_cmd built."""
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=False, no_color=True, highlight=False, soft_wrap=True,
                  width=width)
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    con.print(table)
    return without_trailing_spaces(buf.getvalue())


cell = st.text(alphabet=string.ascii_letters + string.digits + " -_./@~()\\]>=<^*", max_size=70) | \
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x3000), max_size=30) | \
    st.text(alphabet="abc-_.@/ 0123456789:[]", max_size=90)


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.text(alphabet="abcdef ", min_size=1, max_size=10), min_size=n, max_size=n),
    st.lists(st.lists(cell, min_size=n, max_size=n), max_size=5))))
def test_the_plain_table_is_what_rich_prints_whenever_it_answers(table):
    columns, rows = table
    plain = plain_table.render(columns, rows, PLAIN_WIDTH)
    if plain is not None:
        assert plain == rich_text(columns, rows)
    elif all(c.isascii() and c.isprintable() and not set(c) & set(":[") for r in rows for c in r):
        assert sum(max(len(x) for x in col) for col in zip(columns, *rows)) + \
            2 * (len(columns) - 1) > PLAIN_WIDTH  # only overflow leaves plain cells to rich


def test_the_summary_table_and_overflow_fall_back():
    columns = ["name", "version", "commit", "layer", "npm deps", "action"]
    rows = [["dsh-bench", "1.0.0", "a529bd5e2305", "2", "37", "added"],
            ["@scope/dsh-x", "-", "-", "plain", "0", "updated (forced)"]]
    assert plain_table.render(columns, rows, PLAIN_WIDTH) == rich_text(columns, rows)
    assert plain_table.render(["a", "b"], [["x" * 150, "y" * 60]], PLAIN_WIDTH) is None  # rich wraps
    assert plain_table.render(["a"], [["[bold]x"]], PLAIN_WIDTH) is None  # rich reads markup
    assert plain_table.render(["a"], [[":smile:"]], PLAIN_WIDTH) is None  # and emoji codes
    assert plain_table.render(["a"], [["\u4e2d"]], PLAIN_WIDTH) is None  # and measures wide text
