"""``@dshctl/ask-user``: the ``ask_user_question`` tool.

The model asks one question with options (one may be marked ``recommended``) and/or free text. Whoever
drives the agent answers: ``agent chat`` from the terminal, ``agent run`` through its control-socket
stream, an embedding program through ``agent.ask_user`` (an async callback ``question -> answer``).
With nobody to ask, the model gets an error result telling it to decide on its own. An answer is
``{"option": label}`` or ``{"text": str}``.
"""
from __future__ import annotations

from .definition import Tool, error_result, text_result

name = "@dshctl/ask-user"
inject = ["tools"]
schema = {"type": "object", "default": {}, "properties": {
    "timeoutMs": {"type": "integer", "minimum": 1, "default": 600000},
}}

PARAMETERS = {
    "type": "object", "required": ["question"], "additionalProperties": False,
    "properties": {
        "question": {"type": "string", "minLength": 1},
        "options": {"type": "array", "items": {
            "type": "object", "required": ["label"], "additionalProperties": False,
            "properties": {"label": {"type": "string", "minLength": 1}, "description": {"type": "string"},
                           "recommended": {"type": "boolean"}}}},
        "allowFreeText": {"type": "boolean", "default": True},
    },
}


def check_answer(question: dict, answer) -> str | None:
    """The answer as the text the model reads, or None when it does not fit the question."""
    if not isinstance(answer, dict):
        return None
    labels = [o["label"] for o in question.get("options") or []]
    if isinstance(answer.get("option"), str) and answer["option"] in labels:
        return f"The user chose: {answer['option']}"
    if isinstance(answer.get("text"), str) and answer["text"].strip() and question.get("allowFreeText", True):
        return f"The user answered: {answer['text'].strip()}"
    return None


async def ask_user_question(args, run):
    asker = getattr(run.agent, "ask_user", None)
    if asker is None:
        return error_result("no user is attached to this session to answer; decide yourself and say which "
                            "assumption you made", "NO_USER")
    if sum(1 for o in args.get("options") or [] if o.get("recommended")) > 1:
        return error_result("mark at most one option as recommended", "BAD_QUESTION")
    answer = await asker(args)
    text = check_answer(args, answer)
    if text is None:
        return error_result("the user gave no usable answer", "NO_ANSWER")
    return text_result(text)


def apply(ctx, config):
    tool = Tool("ask_user_question", "Ask the user one question, with options (mark at most one "
                "recommended) and/or free text; returns the answer.", ask_user_question, PARAMETERS,
                timeout_ms=config["timeoutMs"])
    ctx.tools.register(ctx, tool.name, tool, ctx.get("toolScope") or "global")
