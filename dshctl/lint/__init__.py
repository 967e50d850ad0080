"""Lint dsh configuration files: a pipeline (pipeline.py) over self-describing rules (registry.py)."""
from dshctl.lint.pipeline import discover, lint_paths, lint_text
from dshctl.lint.registry import RULES, Rule, all_rules, rule

__all__ = ["RULES", "Rule", "all_rules", "discover", "lint_paths", "lint_text", "rule"]
