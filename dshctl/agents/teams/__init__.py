"""Agent Teams (docs/subagents.md, "Agent Teams"; dsh's experimental ``agent-team`` and
``tool-agent-team``): a persistent roster of named continuable children, a shared task board and a
mailbox, all recorded in the Team Lead's own session log as ``team/member``, ``team/task``,
``team/message/queued`` and ``team/message/delivered`` events, so a restarted host folds them back.

``fold`` (replaying the Lead's log into the Team state, strictly), ``board`` (the task board's
transitions and views), ``service`` (``ctx.agentTeams``: membership, roster, mailbox, waits),
``tools`` (the ten model tools by dsh's names and schemas), ``plugin`` (``@dshctl/agent-team``),
``tool_row`` (``@dshctl/agent-team-tools``).

May import ``core``, the standard library and its sibling agent packages (``loop``, ``subagents``,
``tools``, ``session``): teammates are continuable sub-agents of the Lead.
"""
