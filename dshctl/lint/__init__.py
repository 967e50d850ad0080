"""Lint dsh configuration files: a pipeline (pipeline.py) over self-describing rules (registry.py).

Lives here: discovery of lintable files and the rule policies (plan.py, no parser), the rule
registry, the built-in rules (``rules/``, registered by ``pipeline`` importing them), the result
cache and parallel runs (parallel.py). May import ``dshctl.core`` and ``dshctl.errors``. Imported by
``dshctl.report`` and ``dshctl.cli``; never by ``core``, the runtime, the loader or the host.

The names below are loaded on first use, so that importing ``dshctl.lint.plan`` or
``dshctl.lint.parallel`` (a fully cached run) does not import the parser and every rule.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (a cached lint's start-up)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RULES", "Rule", "all_rules", "discover", "lint_paths", "lint_text", "rule"]
_FROM = {"discover": "pipeline", "lint_paths": "pipeline", "lint_text": "pipeline",
         "RULES": "registry", "Rule": "registry", "all_rules": "registry", "rule": "registry"}


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module 'dshctl.lint' has no attribute {name!r}")
    import importlib

    importlib.import_module("dshctl.lint.pipeline")  # registers the built-in rules
    return getattr(importlib.import_module(f"dshctl.lint.{_FROM[name]}"), name)
