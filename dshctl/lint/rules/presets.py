"""Rules for agent presets' ``agent.cordis.yml`` (dsh-config.md §7; docs/presets.md).

They let ``dshctl lint`` report what dsh's preset roster reports. The rule ids and texts are the ones
``dshctl preset lint`` uses, and the checks are the preset core's, so both commands agree. Checks that
need a whole root (skipped names, shadowed ids, a directory without ``agent.cordis.yml``) stay with
``dshctl preset lint``: a lint rule sees one file at a time. So do the checks a bare lint of a
repository should not fail on (missing relative plugin files, metadata dsh drops, which the
``schema`` rule already reports for ``preset.yml``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.core.presets import COMPOSITION_FILE
from dshctl.core.presets.discovery import composition_health
from dshctl.core.presets.health import BROKEN_HINT, check_rows_shape, health_of_parse_error
from dshctl.core.presets.model import Health
from dshctl.lint.registry import Finding, LintFile, rule

def _is_composition(lf: LintFile) -> bool:
    return Path(lf.path).name == COMPOSITION_FILE


def _health(lf: LintFile) -> Health:
    """The preset's health from what the pipeline loaded. A file it could not even decode (invalid
    UTF-8, too large, unreadable) is judged from its bytes, as dsh reads it."""
    if lf.text is None:
        return composition_health(lf.path)
    if lf.parse_error is not None:
        return health_of_parse_error(lf.parse_error, Path(lf.path))
    return check_rows_shape(lf.value, Path(lf.path))


@rule("preset-health", level="error", kinds=(fk.ENTRY_LIST,), needs_value=False,
      example_file=COMPOSITION_FILE,
      good="- id: tools\n  name: '@dshctl/tools'\n- id: extras\n  name: cordis:group\n  group: true\n"
           "  config: []\n",
      bad="- id: tools\n  name: '@dshctl/tools'\n- id: extras\n  name: cordis:group\n  group: true\n"
          "  config:\n    - id: nameless\n")
def preset_health(lf: LintFile) -> Iterator[Finding]:
    """A preset's agent.cordis.yml must pass dsh's shape check: valid YAML, a top-level list, every
    row a mapping with a non-empty string `name`, every `group: true` row holding a list of rows
    (checked recursively). Otherwise dsh lists the preset as broken, with the reason reported here
    in dsh's words (e.g. `row 2 row 1 names no plugin (a "name" string is required)`), and refuses
    to mount it. `[]` is healthy."""
    if not _is_composition(lf):
        return
    health = _health(lf)
    if not health.ok:
        yield Finding(health.loc, health.broken, hint=health.detail or BROKEN_HINT)

