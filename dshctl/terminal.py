"""Whether a stream gets colour: shared by the CLI's consoles and the host's log (neither owns it)."""
from __future__ import annotations

import os
import sys


def color_enabled(stream=None) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (https://no-color.org)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())
