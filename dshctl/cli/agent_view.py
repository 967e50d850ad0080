"""What ``dshctl agent`` shows: the streamed answer, tool calls and results, questions, turn ends; and
the chat loop with its /commands."""
from __future__ import annotations

import asyncio
import json
import os
import sys

REASON_TEXT = {"blocked": "a plugin rejected the input (agent/pre-step)", "max-tokens":
               "the answer hit the model's output limit"}


def describe_reason(reason: dict | None) -> str | None:
    """None for a plain completion, else one line on why the turn ended."""
    kind = (reason or {}).get("kind")
    if kind in (None, "completed"):
        return None
    if kind == "aborted":
        cause = reason.get("reason") or {}
        return f"turn stopped: {cause['reason']}" if cause.get("kind") == "hook" else "turn aborted"
    if kind == "error":
        error = reason.get("error") or {}
        return f"turn failed: {error.get('message')} ({error.get('code')})"
    return f"turn ended: {REASON_TEXT.get(kind, kind)}"


class TurnPrinter:
    def __init__(self, *, json_lines: bool = False, out=None, err=None):
        self.json_lines = json_lines
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._mid_line = False
        self._styled = None          # a rich console for the side lines, on a colour terminal
        self.interactive_answers = sys.stdin.isatty()
        self.last_session: str | None = None
        self.show_reasoning = False    # --show-reasoning, /reasoning: the model's thinking, dimmed, on stderr
        self.usage: dict = {}          # this turn's tokens, summed over its steps
        self._in_reasoning = False

    def _text(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def _side(self, text: str, style: str = "dim") -> None:
        if self._mid_line:
            self._text("\n")
        if self._styled is None:
            self._styled = _console_for(self.err) or False
        if self._styled:
            self._styled.print(text, style=style, markup=False, highlight=False, soft_wrap=True)
        else:
            self.err.write(text + "\n")
        self.err.flush()

    def _reasoning(self, text: str) -> None:
        if self._mid_line and not self._in_reasoning:
            self._text("\n")
        self._in_reasoning = True
        self.err.write(text)
        self.err.flush()

    def note(self, text: str) -> None:
        self._side(f"-- {text}")

    def event(self, event: dict) -> None:
        if self.json_lines:
            self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
            self.out.flush()
            return
        kind, data = event["type"], event["data"]
        if kind == "assistant/chunk" and data["chunk"].get("type") == "text-delta":
            if self._in_reasoning:
                self._in_reasoning = False
                self.err.write("\n")
            self._text(data["chunk"]["text"])
        elif kind == "assistant/chunk" and data["chunk"].get("type") == "reasoning-delta" and self.show_reasoning:
            self._reasoning(data["chunk"].get("text", ""))
        elif kind == "assistant/message":
            from dshctl.cli.agent_options import add_usage
            add_usage(self.usage, data.get("usage"))
        elif kind == "tool/call":
            self._side(f"  → {data['name']} {data['arguments']}")
        elif kind == "tool/result":
            block = data["message"]["content"][0]
            text = " ".join(b.get("text", "") for b in block["content"] if isinstance(b, dict)).strip()
            first = text.splitlines()[0] if text else ""
            self._side(f"  ← {'error: ' if block.get('isError') else ''}{first[:200]}",
                       "red" if block.get("isError") else "dim")
        elif kind == "step/end" and self._mid_line:
            self._text("\n")

    def subagent(self, info: dict) -> None:
        """A child starting or settling: one line on stderr, in both formats (stdout stays the log)."""
        label = f"subagent {info.get('id')} ({info.get('provider')})"
        if info.get("event") == "start":
            self._side(f"  ⇢ {label} started")
            return
        said = " ".join(b.get("text", "") for b in info.get("lastAssistantMessage") or [] if isinstance(b, dict))
        first = said.strip().splitlines()[0][:120] if said.strip() else ""
        reason = info.get("stopReason")
        self._side(f"  ⇠ {label} {reason}" + (f": {first}" if first else ""),
                   "dim" if reason == "completed" else "yellow")

    def done(self, line: dict) -> None:
        self.last_session = line.get("session")
        if self.json_lines:
            self.out.write(json.dumps({"done": True, "session": line.get("session"),
                                       "reason": line.get("reason")}, ensure_ascii=False) + "\n")
            return
        if self._mid_line:
            self._text("\n")
        why = describe_reason(line.get("reason"))
        if why:
            self._side(f"dshctl: {why}", "yellow")
        from dshctl.cli.agent_options import usage_line
        used = usage_line(self.usage, line.get("prices"))
        if used:
            self.err.write(f"({used})\n")
        self.usage = {}
        self.err.write(f"(session {line.get('session')})\n")

    async def ask(self, question: dict) -> dict | None:
        """A question from ask_user_question, answered on the terminal (nobody there: no answer)."""
        if not self.interactive_answers:
            self._side(f"? {question.get('question')} (no terminal to answer on)")
            return None
        return await ask_on_terminal(question, self._side)


def _console_for(stream):
    """rich on a colour terminal (NO_COLOR and pipes get plain lines)."""
    from dshctl.terminal import color_enabled
    if not color_enabled(stream):
        return None
    from rich.console import Console
    return Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True)


async def ask_on_terminal(question: dict, show) -> dict | None:
    options = question.get("options") or []
    show(f"? {question.get('question')}", "bold")
    for n, option in enumerate(options, 1):
        mark = " (recommended)" if option.get("recommended") else ""
        desc = f" — {option['description']}" if option.get("description") else ""
        show(f"  {n}. {option['label']}{mark}{desc}", "bold" if mark else "")
    hint = "number or your own answer" if options else "your answer"
    reply = await read_line(f"answer ({hint}): ")
    if reply is None:
        return None
    reply = reply.strip()
    if reply.isdigit() and 1 <= int(reply) <= len(options):
        return {"option": options[int(reply) - 1]["label"]}
    if not reply and any(o.get("recommended") for o in options):
        return {"option": next(o["label"] for o in options if o.get("recommended"))}
    return {"text": reply}


async def read_line(prompt: str) -> str | None:
    """One line from stdin off the event loop; None at end of input."""
    def read():
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = sys.stdin.readline()
        return None if line == "" else line.rstrip("\n")
    return await asyncio.get_running_loop().run_in_executor(None, read)


HELP = """commands:
  /help            this list
  /session         the current session id
  /new             start a new session
  /preset NAME     use another agent preset from the next turn
  /permissions P   switch the permission preset (workspace-write, danger-full-access) next turn
  /model NAME      use another model from the next turn (/model alone: which one)
  /reasoning       show or hide the model's reasoning
  /quit, /exit     leave (Ctrl-D too); Ctrl-C aborts a running turn"""


def working_directory() -> str | None:
    """This process's working directory, which a new session records (None when it was removed)."""
    import os
    try:
        return os.getcwd()
    except OSError:
        return None


class ChatSession:
    def __init__(self, state, *, session: str | None, preset: str | None, model: str | None = None,
                 show_reasoning: bool = False, permissions: dict | None = None):
        self.state = state
        self.session = session
        self.preset = preset
        self.model = model
        self.show_reasoning = show_reasoning
        self.permissions = dict(permissions or {})     # "permissions" / "approval" for the next turn

    async def run(self) -> int:
        from dshctl.cli.agent_link import connect, drive_turn
        from dshctl.errors import DshctlError
        printer = TurnPrinter()
        printer.interactive_answers = True
        self.printer = printer
        link = await connect(self.state.home, self.state.profile)
        sys.stderr.write(f"dshctl agent chat on {link.where}; /help for commands\n")
        try:
            while True:
                line = await read_line("you> ")
                if line is None:
                    sys.stdout.write("\n")
                    return 0
                line = line.strip()
                if not line:
                    continue
                if line.startswith("/"):
                    if self.command(line) == "quit":
                        return 0
                    continue
                printer.show_reasoning = self.show_reasoning
                try:
                    await drive_turn(link, {"prompt": line, "session": self.session, "preset": self.preset,
                                            "model": self.model, "cwd": working_directory(),
                                            **self.permissions}, printer)
                    self.permissions = {}
                except DshctlError as err:
                    sys.stderr.write(f"dshctl: error: {err}\n" + (f"  hint: {err.hint}\n" if err.hint else ""))
                self.session = printer.last_session or self.session
        finally:
            await link.close()

    def command(self, line: str) -> str | None:
        name, _, arg = line.partition(" ")
        if name in ("/quit", "/exit"):
            return "quit"
        if name == "/help":
            print(HELP)
        elif name == "/session":
            print(self.session or "(no session yet: the first message starts one)")
        elif name == "/new":
            self.session = None
            print("the next message starts a new session")
        elif name == "/permissions" and arg.strip():
            self.permissions = {"permissions": arg.strip()}
            print(f"permissions {arg.strip()} from the next turn")
        elif name == "/preset" and arg.strip():
            self.switch_preset(arg.strip())
        elif name == "/model":
            if arg.strip():
                self.model = arg.strip()
                print(f"model {self.model} from the next turn")
            else:
                print(f"model {self.model}" if self.model else "the llm row's own model")
        elif name == "/reasoning":
            self.show_reasoning = not self.show_reasoning
            print("reasoning shown" if self.show_reasoning else "reasoning hidden")
        else:
            print(f"unknown command {line!r}; /help lists the commands")
        return None

    def switch_preset(self, preset: str) -> None:
        from dshctl.cli.agent_options import check_preset
        from dshctl.errors import DshctlError
        try:
            check_preset(self.state, preset)
        except DshctlError as err:
            print(f"{err}; keeping {self.preset or 'no preset'}")
            return
        self.preset = preset
        print(f"preset {self.preset} from the next turn")
