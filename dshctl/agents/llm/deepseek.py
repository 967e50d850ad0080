"""``@dshctl/llm-deepseek``: the twin of dsh's ``llm-deepseek`` row — ``@dshctl/llm-openai`` with dsh's
DeepSeek defaults, so a profile written for dsh's adapter sends what dsh sends.

Defaults (dsh 0.1.1-rc.2's): ``baseUrl`` from ``$DEEPSEEK_BASE_URL`` (read when the row starts), else
``https://api.deepseek.com``; the key from ``$DEEPSEEK_API_KEY`` (``apiKeyEnv``); ``model``
``deepseek-v4-flash``; ``reasoningEffort`` ``high`` (so ``thinking: {type: enabled}``,
``reasoning_effort: high``); ``maxTokens`` 256000. Every ``@dshctl/llm-openai`` setting may be given.
"""
from __future__ import annotations

import os

from dshctl.agents.llm.api import LLM_SERVICE, route_service
from dshctl.agents.llm.openai import OpenAiModel
from dshctl.agents.llm.openai import schema as openai_schema

name = "@dshctl/llm-deepseek"
PUBLIC_BASE_URL = "https://api.deepseek.com"
DEFAULTS = {"provider": "deepseek", "model": "deepseek-v4-flash", "reasoningEffort": "high", "maxTokens": 256000,
            "apiKeyEnv": "DEEPSEEK_API_KEY", "harnessHeaders": True}
schema = {**openai_schema, "required": [], "default": {},
          "properties": {**openai_schema["properties"], "baseUrl": {"type": "string", "minLength": 1},
                         "provider": {"type": "string", "minLength": 1, "default": "deepseek"}}}


def resolved(config: dict) -> dict:
    out = {**DEFAULTS, **{k: v for k, v in dict(config).items() if v is not None}}
    out.setdefault("baseUrl", os.environ.get("DEEPSEEK_BASE_URL") or PUBLIC_BASE_URL)
    return out


def apply(ctx, config):
    settings = resolved(config)
    model = OpenAiModel(settings)
    ctx.provide(route_service(model.provider) if settings.get("route") else LLM_SERVICE, model)
    ctx.effect(lambda: model.aclose, "llm-deepseek: close the HTTP client")
