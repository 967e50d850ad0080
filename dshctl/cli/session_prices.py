"""What a turn cost (``agent run`` / ``agent chat``), and the prices ``session show`` prices a session's
turns at: the profile's llm row as the host last applied it (``<profile>/.dshctl/last-good.json``), since
a session log does not record prices (docs/agents.md, "Cost")."""
from __future__ import annotations

import json
from pathlib import Path

LLM_PLUGINS = frozenset({"@dshctl/llm-openai", "@dshctl/llm-deepseek", "@dshctl/llm-script"})


def recorded_prices(home: Path, profile: str) -> dict | None:
    """The ``prices`` of the first enabled dshctl llm row of the last applied composition, or None."""
    from dshctl.host.state_dir import last_good_path
    try:
        rows = json.loads(last_good_path(home, profile).read_text(encoding="utf-8")).get("rows")
    except (OSError, ValueError, AttributeError):
        return None
    for row, parents in _rows(rows if isinstance(rows, list) else [], ()):
        if row.get("name") not in LLM_PLUGINS or any(r.get("disabled") is True for r in (*parents, row)):
            continue
        prices = (row.get("config") or {}).get("prices") if isinstance(row.get("config"), dict) else None
        if isinstance(prices, dict) and all(_number(prices.get(k)) for k in ("input", "output")) \
                and (prices.get("cacheHit") is None or _number(prices["cacheHit"])):
            return {"currency": "USD", **prices}
        return None
    return None


def cost_of(usage: dict, prices: dict) -> float:
    """The price of ``usage`` at ``prices`` per million tokens: cache misses at ``input``, cache hits at
    ``cacheHit`` (else ``input``), completion tokens (reasoning among them) at ``output``."""
    hit = prices.get("cacheHit", prices["input"])
    return (usage.get("inputTokens", 0) * prices["input"] + usage.get("cacheReadTokens", 0) * hit
            + usage.get("outputTokens", 0) * prices["output"]) / 1_000_000


def _rows(rows: list, parents: tuple):
    """Every row of the recorded tree with its group ancestors (compose's ``iter_rows`` without its
    imports: a group is a row with ``group: true`` whose config is its list of rows)."""
    for row in rows:
        if isinstance(row, dict):
            yield row, parents
            if row.get("group") is True and isinstance(row.get("config"), list):
                yield from _rows(row["config"], parents + (row,))


def _number(value) -> bool:
    return type(value) in (int, float) and value >= 0


def usage_by_turn(events: list[dict]) -> dict[int, dict]:
    """Each turn's usage summed over its steps (cache hits included, which the turn summary leaves out)."""
    out: dict[int, dict] = {}
    for event in events:
        data = event.get("data")
        if event.get("type") == "assistant/message" and isinstance(data, dict) and isinstance(data.get("usage"), dict):
            total = out.setdefault(data.get("turn"), {})
            for key, value in data["usage"].items():
                if type(value) is int:
                    total[key] = total.get(key, 0) + value
    return out
