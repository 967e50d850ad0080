"""The text of a borderless rich table (``Table(box=None, pad_edge=False, header_style="bold")``)
as ``cli.shared.print_table`` prints it on a plain, non-terminal console (no trailing spaces), without
importing rich (~40 ms of start-up).

Only for cells rich would print as they are: printable ASCII without markup (``[``) or emoji
codes (``:``), in a table that fits the width. Anything else returns None and the caller lets rich
render it; a property test holds the two byte-identical.
"""
from __future__ import annotations

import re

_PLAIN = re.compile(r"[ -9;-Z\\\]^-~]*\Z")  # printable ASCII except ':' and '['


def render(columns: list[str], rows: list[list[str]], width: int) -> str | None:
    cells = [list(columns), *([str(c) for c in row] for row in rows)]
    if not columns or any(len(r) != len(columns) or not all(_PLAIN.match(c) for c in r)
                          for r in cells):
        return None
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    if sum(widths) + 2 * (len(columns) - 1) > width or any(w == 0 for w in widths):
        return None
    lines = []
    for r in cells:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"
