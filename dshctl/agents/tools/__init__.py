"""Tool definitions, the per-call pipeline and the step scheduler the agent loop runs tool calls with.

``pipeline.dispatch`` is the one way a call reaches a tool (the loop for model calls, Code Mode for
sub-calls); ``scheduler.run_tool_calls`` orders one step's calls into parallel groups and exclusive
barriers and commits their results to the session log in the model's order.

May import ``dshctl.agents.llm.api``, ``core`` and ``dshctl.errors``; never the loop, the session store
or the host (the registry arrives as the ``tools`` service).
"""
