"""Sub-agents (dsh's ``dsh-subagent`` seam): ``ctx.subagents``, its in-process providers, the model's tools.

``service.py`` is the registry and lifecycle (one-shot runs, continuable children, settlement notices),
``child.py`` composes a child from its parent (depth, header lineage, pinned policies, persona, tool
filter), ``descriptor.py`` is the durable ``subagent/descriptor`` payload, ``providers.py`` the
``spawn`` / ``fork`` providers, ``tools.py`` the five model tools, ``plugin.py`` the rows.
"""
