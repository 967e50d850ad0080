"""The examples in docs/jsexpr.md are tests: each `expr => result` line is evaluated here."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dshctl.core.jsexpr import UNDEFINED, JsEnv, JsEvalError, JsSyntaxError, evaluate, parse

DOC = Path(__file__).resolve().parent.parent / "docs" / "jsexpr.md"
BLOCK = re.compile(r"```js-examples\n(.*?)```", re.S)
ENV = JsEnv({"PORT": "8080", "EMPTY": ""}, "/srv/app", "linux", Path("/home/me/.dsh"),
            get_service={"llm": {"model": "v4"}}.get,
            injected={"webStartup": {"port": 4000, "host": None}})


def examples():
    [block] = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    return [tuple(part.strip() for part in line.split("=>", 1)) for line in block.splitlines()
            if line.strip()]


def test_the_doc_has_examples():
    assert len(examples()) >= 20


@pytest.mark.parametrize("expr, expected", examples())
def test_doc_example(expr, expected):
    if expected.startswith("syntax: "):
        with pytest.raises(JsSyntaxError) as info:
            parse(expr)
        assert info.value.reason.startswith(expected.removeprefix("syntax: "))
        return
    tree = parse(expr)
    if expected.startswith("error: "):
        with pytest.raises(JsEvalError) as info:
            evaluate(tree, ENV)
        assert info.value.reason == expected.removeprefix("error: ")
        return
    value = evaluate(tree, ENV)
    if expected == "undefined":
        assert value is UNDEFINED
    else:
        want = json.loads(expected)
        assert value == want and type(value) is type(want)
