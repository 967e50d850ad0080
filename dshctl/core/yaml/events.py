"""Where the dialect's parser events come from: libyaml (ruamel's C accelerator) when it reads the
text as js-yaml would, else ruamel's pure YAML 1.2 parser with js-yaml's flow-context rules. The
dialect builds values from these events (dialect.py); yamlpos.py takes spans from them."""
from __future__ import annotations

import io

from ruamel.yaml import YAML
from ruamel.yaml import events as ev
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scanner import Scanner, ScannerError

from dshctl.core.yaml.blocktokens import flow_query_or_dash

try:  # ruamel's C accelerator (libyaml); optional
    from ruamel.yaml.cyaml import CParser as _CParser
except ImportError:  # pragma: no cover - exercised only without the accelerator
    _CParser = None


class _CParserFailed(Exception):
    """libyaml rejected the text; the YAML 1.2 pure-Python parser decides instead."""


def _c_events(text: str):
    """libyaml's events, one at a time, so the builder's limits stop a hostile file early."""
    parser = _CParser(io.StringIO(text))
    try:
        while True:
            try:
                e = parser.get_event()
            except YAMLError:
                raise _CParserFailed from None
            yield e
            if isinstance(e, ev.StreamEndEvent):
                return
    finally:
        parser.dispose()


class _JsYamlFlowScanner(Scanner):
    """ruamel's scanner with js-yaml's flow-context rules for a leading ``?`` or ``-``.

    ruamel (like libyaml) takes any ``?`` in flow context as the explicit-key indicator, so
    ``[?x]`` became ``[{x: null}]`` and ``{a: ?x}`` an error, and it accepts ``[-]``. js-yaml 4
    follows YAML 1.2: ``?`` is an indicator only before a space or line end, and a ``?``/``-``
    starts a plain scalar only when a character other than a space or ``,[]{}`` follows.
    Found by tests/test_patching_node.py.
    """

    def check_key(self) -> bool:
        if self.flow_level:
            return self.reader.peek(1) in _END_OR_SPACE
        return super().check_key()

    def check_plain(self) -> bool:
        ch = self.reader.peek()
        if self.flow_level and ch in "-?":
            following = self.reader.peek(1)
            return following not in _END_OR_SPACE and following not in ",[]{}"
        return super().check_plain()


    def stale_possible_simple_keys(self) -> None:
        """ruamel (like libyaml) drops a possible implicit key after 1,024 characters, as YAML
        suggests; js-yaml has no such limit, so ``{<1,100 characters>: 1}`` is an error here and a
        mapping for dsh. Only the single-line rule stays (issue 28: ``profile disable`` exited 3
        on a file ``lint`` accepted)."""
        for level in list(self.possible_simple_keys):
            key = self.possible_simple_keys[level]
            if key.line != self.reader.line:
                if key.required:
                    raise ScannerError("while scanning a simple key", key.mark,
                                       "could not find expected ':'", self.reader.get_mark())
                del self.possible_simple_keys[level]


_END_OR_SPACE = " \t\r\n\0\x85\u2028\u2029"


def pure_events(text: str):
    """Events from ruamel's pure-Python YAML 1.2 parser (the one whose verdict counts)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = _JsYamlFlowScanner
    return yaml.parse(io.StringIO(text))


def _c_parser_agrees(text: str) -> bool:
    """False when libyaml could read ``text`` differently from js-yaml (see _JsYamlFlowScanner)."""
    return _CParser is not None and not flow_query_or_dash(text)  # then the scanner above reads it


def event_source(text: str):
    """Parser events for ``text``.

    The C parser (libyaml, via ruamel's accelerator) is tried first because it is ~10x faster. It
    speaks YAML 1.1 and is stricter than js-yaml in flow context (it rejects ``{a: x ?? 1}`` and
    ``{url: http://x:80/}``), so on any error the YAML 1.2 pure-Python parser decides, and its error
    is the one reported.
    """
    if _c_parser_agrees(text):
        try:
            return list(_c_events(text))
        except _CParserFailed:
            pass
    return pure_events(text)
