"""The rule behind disable comments (the check itself is the post-pass in ``dshctl.lint.suppress``)."""
from __future__ import annotations

from typing import Iterator

from dshctl.core.yaml import filekinds as fk
from dshctl.lint.registry import Finding, LintFile, rule
from dshctl.lint.suppress import RULE_ID


@rule(RULE_ID, level="warning", kinds=sorted(fk.YAML_KINDS), needs_value=False,
      example_file="cordis.yml",
      good="- name: dsh-hello  # dshctl: disable-line=id-missing\n",
      bad="- id: hello\n  name: dsh-hello  # dshctl: disable-line=id-missing\n")
def unused_disable(lf: LintFile) -> Iterator[Finding]:
    """A disable comment (`# dshctl: disable-line=RULE`, `disable-next-line=RULE`,
    `disable-file=RULE`) must disable something: one that matches no finding of its rule, or names
    no rule, is reported, so stale disables do not pile up and typos do not silently disable
    nothing. Found after all rules ran, by the disable-comment pass."""
    return iter(())
