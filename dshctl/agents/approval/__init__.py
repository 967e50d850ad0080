"""Approvals (docs/sandbox.md, "Approvals"): dsh's ``ctx.approval`` seam with its ``ask``/``never``
policies, audit events and one answerer per front end, the ``ask`` decision of ``tools/pre-execute``,
escalated retries, and the permission presets.

``policy`` (vocabulary, folds, dsh's texts; pure), ``service`` (``ctx.approval``), ``gate`` (the
pipeline's ``ask`` and escalations), ``plugin`` (``@dshctl/approval``). May import
``dshctl.agents.sandbox`` (the modes), ``dshctl.agents.loop.inbox`` (a user message) and ``core``;
``dshctl.agents.tools.pipeline`` imports ``gate`` lazily, at an ``ask``.
"""
