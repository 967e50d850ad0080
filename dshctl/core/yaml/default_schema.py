"""Files dsh reads with js-yaml's *default* schema (``yaml.load(raw)``): ``preset.yml``.

Under that schema ``2024-01-01`` is a Date, ``<<: *base`` merges a mapping (and a merge of anything
else is js-yaml's ``cannot merge mappings; …`` error), and tags such as ``!!set`` exist. The fast reader
(``dialect.load_yaml`` with the JSON schema) gives positions, and its value is js-yaml's whenever the
text uses none of those (no timestamp, ``<<`` or tag can appear without these characters). Otherwise
the port (``jsyaml.DEFAULT``) gives the value and the verdict, and the top-level keys keep the fast
reader's positions. ``dshctl preset list|lint`` (core/presets/metadata.py) and ``dshctl lint`` both
read ``preset.yml`` here, so they agree; tests/test_preset_yml_jsyaml.py holds it against js-yaml.
"""
from __future__ import annotations

import re
from pathlib import Path

from dshctl.core.yaml.dialect import Document, LimitError, load_yaml
from dshctl.errors import Loc, ParseError

_DEFAULT_ONLY = re.compile(r"[0-9]{4}-[0-9]|<<|!")


def load_default_yaml(text: str, path: str | Path) -> Document:
    """``text`` as js-yaml's default schema reads it; a ParseError carries js-yaml's message
    (``js_message``) at js-yaml's position."""
    from dshctl.core.yaml import jsyaml
    from dshctl.core.yaml.verdict import to_nodes, yaml_error

    path = str(path)
    fast, fast_error = None, None
    try:
        fast = load_yaml(text, path, js=False)
    except LimitError:
        raise
    except ParseError as err:
        fast_error = err
    if fast is not None and not _DEFAULT_ONLY.search(text):
        return fast
    try:
        value = jsyaml.load(text, jsyaml.DEFAULT)
    except jsyaml.JsYamlError as found:
        raise yaml_error(found, text, path, fallback=fast_error) from None
    except RecursionError:
        message = f"nesting exceeded maxDepth ({jsyaml.MAX_DEPTH})"
        raise ParseError(message, loc=Loc(path), js_message=message,
                         hint="flatten the structure; js-yaml stops at 100 levels") from None
    nodes = to_nodes(value, fast.loc if fast is not None else Loc(path, 1, 1))
    if fast is not None:
        _borrow_positions(nodes, fast.value)
    return Document(path=path, value=nodes, empty=value is None and (fast is None or fast.empty))


def _borrow_positions(nodes, positions) -> None:
    """Give the port's top-level keys the positions the fast reader found for the same keys."""
    if not (hasattr(nodes, "key_locs") and hasattr(positions, "key_locs")):
        return
    for key in nodes:
        if key in positions.key_locs:
            nodes.key_locs[key] = positions.key_locs[key]
        if key in positions.value_locs:
            nodes.value_locs[key] = positions.value_locs[key]
