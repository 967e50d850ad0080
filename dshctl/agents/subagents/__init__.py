"""Sub-agents (docs/subagents.md; dsh's ``dsh-subagent`` seam): ``ctx.subagents``, its in-process
providers, and the model's tools.

``service`` (the registry and lifecycle: one-shot runs, continuable children, settlement notices),
``child`` (composing a child from its parent: depth, header lineage, pinned policies, persona, tool
filter), ``descriptor`` (the durable ``subagent/descriptor``), ``outcome`` (stop reasons, final output and
dsh's texts for them), ``providers`` (``spawn`` / ``fork``), ``schemas`` and ``tools`` (the five model
tools), ``plugin`` (``@dshctl/subagents``), ``tool_row`` (``@dshctl/subagent-tools``).

May import ``core``, the standard library and its sibling agent packages (``loop``, ``tools``,
``session``, ``sandbox``): the children it makes are ordinary agents of the loop.
"""
