"""Tool arguments bounded in depth and size (issue 28, finding 4): a deeply nested or huge argument
text is an error result (TOOL_ARGUMENTS_JSON); the other calls of the step still run."""
import pytest

from dshctl.agents.tools.bounds import MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH
from dshctl.agents.tools.pipeline import parse_arguments
from tests.agents.loop_rows import agent_home
from tests.agents.test_loop_turns import one_turn, turn_end
from tests.host.helpers import InProcess, run_async

DEEP = "[" * 200_000 + "]" * 200_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


@pytest.mark.parametrize("raw", [DEEP, DEEP_OBJECT, '{"k": "' + "[" * 5000 + '", "d": ' + "[" * 100 + "]" * 100 + "}"])
def test_deep_argument_text_is_a_problem_not_an_exception(raw):
    args, problem = parse_arguments(raw)
    assert problem is not None and f"{MAX_ARGUMENT_DEPTH} levels" in problem
    assert isinstance(args, str) and len(args) <= 1100  # what the log keeps of it: a prefix


def test_brackets_inside_strings_do_not_count():
    raw = '{"text": "' + "[" * 10_000 + '"}'
    assert parse_arguments(raw) == ({"text": "[" * 10_000}, None)


def test_an_argument_text_past_the_size_limit_is_refused_unparsed():
    raw = '{"text": "' + "x" * (MAX_ARGUMENT_BYTES + 1) + '"}'
    args, problem = parse_arguments(raw)
    assert problem is not None and f"{MAX_ARGUMENT_BYTES:,} bytes" in problem


def test_a_deep_object_already_parsed_is_refused_too():
    deep: list = []
    node = deep
    for _ in range(MAX_ARGUMENT_DEPTH + 5):
        node.append([])
        node = node[0]
    args, problem = parse_arguments(deep)
    assert problem is not None and args == {}


@run_async()
async def test_a_deep_call_is_an_error_result_and_the_other_calls_of_the_step_run(tmp_path):
    replies = [{"toolCalls": [{"name": "sleep_par", "arguments": DEEP},
                              {"name": "echo", "arguments": {"text": "still here"}},
                              {"name": "sleep_par", "arguments": DEEP_OBJECT}]},
               {"text": "recovered"}]
    home = agent_home(tmp_path, replies, probe={})
    async with InProcess(home) as host:
        agent = await one_turn(host, "try")
        results = [e["data"] for e in agent.session.events if e["type"] == "tool/result"]
        codes = [(r.get("error") or {}).get("code") for r in results]
        assert codes == ["TOOL_ARGUMENTS_JSON", None, "TOOL_ARGUMENTS_JSON"]
        assert "still here" in str(results[1])
        assert turn_end(agent) == {"kind": "completed"}
