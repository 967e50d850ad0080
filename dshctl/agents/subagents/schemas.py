"""The model-visible parameter schemas of dsh's sub-agent tools (as its headless profile offers them)."""
from __future__ import annotations

_DESCRIPTION = {"type": "string", "description": "A short (3-5 word) description of the delegated task, for display."}


def delegation_parameters(prompt_description: str, background_description: str | None) -> dict:
    properties = {"description": dict(_DESCRIPTION), "prompt": {"type": "string", "description": prompt_description}}
    if background_description is not None:
        properties["run_in_background"] = {"type": "boolean", "description": background_description}
    return {"type": "object", "properties": properties, "required": ["description", "prompt"]}


FRESH_PROMPT = ("The complete, self-contained task for the subagent. It does not share this conversation's "
                "context, so include everything it needs.")
FORK_PROMPT = ("The task for the subagent. It already sees this conversation's completed turns, so build on them "
               "freely and state only what is new.")
CONTINUABLE_BACKGROUND = ("Whether to run in the background and return a durable subagent id immediately. Defaults "
                          "to true. Set false to wait for the result when your next action depends on it.")
ONE_SHOT_BACKGROUND = ("Whether to run as a background job and return its id. Defaults to false; collect with "
                       "job_output or stop with job_kill.")

SUBAGENT_PARAMETERS = delegation_parameters(FRESH_PROMPT, CONTINUABLE_BACKGROUND)
SUBAGENT_FORK_PARAMETERS = delegation_parameters(FORK_PROMPT, ONE_SHOT_BACKGROUND)
LIST_AGENTS_PARAMETERS = {"type": "object", "properties": {"scope": {
    "type": "string", "enum": ["children", "descendants"],
    "description": "children (default) lists direct children only; descendants walks the complete tree below you."}}}
SEND_MESSAGE_PARAMETERS = {"type": "object", "properties": {
    "subagent_id": {"type": "string", "description": "The subagent id returned when the background subagent was started."},
    "message": {"type": "string", "description": "The message to deliver to the subagent."}},
    "required": ["subagent_id", "message"]}
INTERRUPT_AGENT_PARAMETERS = {"type": "object", "properties": {
    "agent_id": {"type": "string", "description": "The agent id of the running agent to interrupt."}},
    "required": ["agent_id"]}

TOOL_PARAMETERS = {"subagent": SUBAGENT_PARAMETERS, "subagent_fork": SUBAGENT_FORK_PARAMETERS,
                   "list_agents": LIST_AGENTS_PARAMETERS, "send_message": SEND_MESSAGE_PARAMETERS,
                   "interrupt_agent": INTERRUPT_AGENT_PARAMETERS}
