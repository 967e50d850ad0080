"""Lint dsh configuration files: a pipeline (pipeline.py) over self-describing rules (registry.py).

Lives here: discovery of lintable files, the rule registry, the built-in rules (``rules/``), which this
package imports so that they register themselves. May import ``dshctl.core`` and ``dshctl.errors``.
Imported by ``dshctl.report`` and ``dshctl.cli``; never by ``core``, the runtime, the loader or the host.
"""
from dshctl.lint.pipeline import discover, lint_paths, lint_text
from dshctl.lint.registry import RULES, Rule, all_rules, rule
import dshctl.lint.rules  # noqa: E402,F401 - the owner of the built-in rules registers them

__all__ = ["RULES", "Rule", "all_rules", "discover", "lint_paths", "lint_text", "rule"]
