"""JSON: a list of diagnostic objects (the fields of ``Diagnostic``)."""
from __future__ import annotations

import json
from typing import IO, Sequence

from dshctl.core.diagnostics import Diagnostic


def write(diags: Sequence[Diagnostic], stream: IO[str]) -> None:
    stream.write(json.dumps([d.to_dict() for d in diags], indent=2, ensure_ascii=False) + "\n")
