"""docs/cli.md's command table: one unbroken table that names every command `dshctl --help` lists,
each once (it once had a blank line in the middle, a repeated `lint` row and a stray fragment)."""
from __future__ import annotations

import re
from pathlib import Path

from dshctl.cli.app import COMMANDS

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def command_table() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    body = section.strip("\n").split("\n")
    assert body[0].startswith("| command |") and body[1].startswith("|---")
    return body[2:]


def test_the_table_is_one_table_to_the_end_of_its_section():
    rows = command_table()
    assert rows and all(re.fullmatch(r"\|.+\|", row) and row.count(" | ") == 2 for row in rows), rows


def test_every_command_is_in_the_table_and_no_row_repeats():
    cells = [row.split(" | ")[0] for row in command_table()]
    named = {w for cell in cells for w in re.findall(r"`([a-z-]+)", cell) if w in COMMANDS}
    assert named == set(COMMANDS)
    commands = [re.findall(r"`([a-z-]+)", cell)[0] for cell in cells]
    repeated = [c for c in set(commands) if commands.count(c) > 1 and c != "profile"]  # profile: reads, edits
    assert repeated == []
