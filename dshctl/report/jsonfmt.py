"""JSON: a list of diagnostic objects (the fields of ``Diagnostic``)."""
from __future__ import annotations

from typing import IO, Sequence

from dshctl.core.diagnostics import Diagnostic
from dshctl.core.yaml.jsvalue import json_dumps


def write(diags: Sequence[Diagnostic], stream: IO[str]) -> None:
    stream.write(json_dumps([d.to_dict() for d in diags], indent=2) + "\n")
