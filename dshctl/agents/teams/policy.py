"""The Team guidance in a member's system prompt (dsh's ``team:policy`` section, order 60), in our own
words with dsh's facts: when to form a Team at all, the shared workspace, the two kinds of message, the
board's compare-and-set workflow, how ``wait_agent`` behaves, and who this agent is in its Team. The Lead
and every teammate get it; an ordinary sub-agent (no Team) does not."""
from __future__ import annotations

SECTION_NAME, SECTION_ORDER = "team:policy", 60

GUIDANCE = """\
Agent Teams is on in this session. Only create teammates (spawn_teammate) when the user explicitly asks \
for Agent Teams or for teammates.

Everyone in the Team (the Lead and every teammate) works in the same directory on the same files, and an \
edit is visible to all of them at once. Give each member its own part of the tree to write, record the \
paths a task is expected to write as its write_scopes, and use task dependencies (blocked_by) when one \
piece of work must wait for another. Overlapping write scopes only produce a warning: they lock nothing.

Change files with read/edit/write where you can. When a file operation answers FS_STALE_VERSION, read the \
file again, apply your change to what is there now, and retry. Shell commands, formatters, generators and \
scripts are not covered by that version check: agree on them explicitly, and let the Lead review the \
final diff and run the tests.

Messages: send_message informs a member without starting it if it is idle; followup_task gives it work \
and starts a turn if it is not running. A message you receive begins with its message id and the name of \
its sender. Once a send succeeds the message is stored, even when the result says queued: never send it \
again.

The task board: list the tasks, get the one you want, claim it with the revision you just read, do the \
work, then complete it. A task becoming ready never starts its owner.

Waiting: before wait_agent, call list_agents and check that another member you depend on is running or \
provisioning; if it is inactive, give it work with followup_task first. wait_agent only reports changes \
that happen after it was called, wakes nobody, and answers noProgress at once when no other member can \
change anything. List again after it returns, whether woken or timed out. The Lead waits for the \
teammates it needs before giving its final answer."""


def section_text(membership: dict) -> str:
    """The section for one member: the guidance and its own place in the Team."""
    return (f"{GUIDANCE}\n\nIn this Team your role is {membership['role']} and your name is "
            f"{membership['name']}; the Lead's name is lead; the Team id is {membership['id']}.")


def section(membership: dict) -> dict:
    return {"name": SECTION_NAME, "order": SECTION_ORDER, "text": section_text(membership)}
