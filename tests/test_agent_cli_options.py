"""`agent run` / `agent chat` options a user of agent CLIs expects, as real processes on a real home:
--continue and --session by prefix, --model (on the wire of a real SSE server), usage per turn,
--show-reasoning and /reasoning, /model, a refused /preset."""
import json
import subprocess

from tests.agents.sse_server import Sse, SseServer, chunk
from tests.agents.test_tools_dsh_host import home_with
from tests.host.helpers import DSHCTL, WAIT_S, HostProcess, user_file, write


def agent(home, *args, cwd=None, input=None):
    return subprocess.run([DSHCTL, "--home", str(home), "agent", *args, "--profile", "p"], cwd=cwd, input=input,
                          capture_output=True, text=True, timeout=WAIT_S)


def session_of(result) -> str:
    return result.stderr.strip().splitlines()[-1].removeprefix("(session ").rstrip(")")


def test_continue_and_prefixes_pick_the_session(tmp_path):
    home = home_with(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}])
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    missing = agent(home, "run", "--continue", "hi", cwd=here)
    assert missing.returncode != 0 and f"no session was started in {here}" in missing.stderr
    assert "Traceback" not in missing.stderr
    first = session_of(agent(home, "run", "hi", cwd=here))
    other = session_of(agent(home, "run", "hi", cwd=elsewhere))
    again = agent(home, "run", "--continue", "more", cwd=here)
    assert again.returncode == 0 and session_of(again) == first     # (each embedded run restarts the script)
    by_prefix = agent(home, "run", "--session", other.removeprefix("session-")[:8], "more", cwd=here)
    assert by_prefix.returncode == 0 and session_of(by_prefix) == other
    both = agent(home, "run", "--session", first, "--continue", "x", cwd=here)
    assert both.returncode != 0 and "twice" in both.stderr


def test_usage_and_reasoning_are_shown_per_turn(tmp_path):
    home = home_with(tmp_path, [{"reasoning": "thinking hard", "text": "answer",
                                 "usage": {"inputTokens": 30, "outputTokens": 7, "cacheReadTokens": 10}}])
    shown = agent(home, "run", "--show-reasoning", "hi", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout == "answer\n"
    assert "thinking hard" in shown.stderr and "(tokens in 30, out 7, cache hits 10)" in shown.stderr
    plain = agent(home, "run", "hi", cwd=tmp_path)          # an embedded run: the script starts anew
    assert plain.stdout == "answer\n" and "thinking hard" not in plain.stderr


def test_model_option_reaches_the_wire(tmp_path):
    home = home_with(tmp_path, [])
    with SseServer() as server:
        server.script = [Sse([chunk({"role": "assistant", "content": f"ok {n}"}), chunk(finish="stop"), "[DONE]"])
                         for n in range(3)]
        write(user_file(home), f"- id: llm\n  disabled: true\n- insert:\n    - id: real\n      name: '@dshctl/llm-openai'\n"
                               f"      config: {{baseUrl: '{server.base_url}', model: row-model}}\n")
        with HostProcess(home):
            first = agent(home, "run", "--model", "other-model", "hi", cwd=tmp_path)
            assert first.returncode == 0, first.stderr
            chat = agent(home, "chat", "--session", session_of(first), cwd=tmp_path,
                         input="/model\n/model third-model\nhello\n/quit\n")
            assert chat.returncode == 0, chat.stderr
        assert [r["body"]["model"] for r in server.requests] == ["other-model", "third-model"]
    assert "model third-model from the next turn" in chat.stdout


def test_an_unknown_preset_is_refused_before_any_turn(tmp_path):
    home = home_with(tmp_path, [{"text": "fine"}])
    run = agent(home, "run", "--preset", "bogus", "hi", cwd=tmp_path)
    assert run.returncode != 0 and 'preset "bogus" not found' in run.stderr and "Traceback" not in run.stderr
    chat = agent(home, "chat", cwd=tmp_path, input="/preset bogus\nhi\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    assert 'preset "bogus" not found' in chat.stdout and "keeping no preset" in chat.stdout
    assert "fine" in chat.stdout


def test_the_turns_cost_is_shown_when_the_llm_row_sets_prices(tmp_path):
    home = home_with(tmp_path, [{"text": "a"}])
    with SseServer() as server:
        usage = {"prompt_tokens": 1_200, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 200},
                 "completion_tokens_details": {"reasoning_tokens": 100}}
        server.script = [Sse([chunk({"role": "assistant", "content": "priced"}), chunk(finish="stop"),
                              chunk(usage=usage), "[DONE]"]),
                         Sse([chunk({"role": "assistant", "content": "unpriced"}), chunk(finish="stop"),
                              chunk(usage=usage), "[DONE]"])]
        row = (f"- id: llm\n  disabled: true\n- insert:\n    - id: real\n      name: '@dshctl/llm-openai'\n"
               f"      config:\n        baseUrl: '{server.base_url}'\n        model: m\n")
        write(user_file(home), row + "        prices: {input: 0.28, output: 0.42, cacheHit: 0.028}\n")
        priced = agent(home, "run", "hi", cwd=tmp_path)
        assert priced.returncode == 0, priced.stderr
        # 1,000 misses at 0.28 + 200 hits at 0.028 + 300 out at 0.42, per million tokens
        assert ("(tokens in 1000, out 300, cache hits 200, reasoning 100, cost 0.000412 USD)"
                in priced.stderr), priced.stderr
        shown = show(home, session_of(priced))        # at the prices the host last applied
        assert "1000 in / 300 out tokens, cost 0.000412 USD)" in shown, shown
        write(user_file(home), row)
        plain = agent(home, "run", "hi", cwd=tmp_path)
        assert plain.returncode == 0 and "(tokens in 1000, out 300, cache hits 200, reasoning 100)\n" in plain.stderr
        assert "cost" not in plain.stderr
        assert "1000 in / 300 out tokens)" in show(home, session_of(priced))   # no prices now: no cost


def show(home, session: str) -> str:
    done = subprocess.run([DSHCTL, "--home", str(home), "session", "show", "--profile", "p", session],
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_prices_are_checked_against_the_rows_schema(tmp_path):
    home = home_with(tmp_path, [{"text": "a"}])
    write(user_file(home), "- id: llm\n  config:\n    prices: {input: -1}\n")
    bad = agent(home, "run", "hi", cwd=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "prices" in bad.stderr, bad.stderr
